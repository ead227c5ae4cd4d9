// libFuzzer target: PipelineDefinition.decode on arbitrary bytes (scripts/fuzz.sh).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    if let pipeline = try? PipelineDefinition.decode(bytes, file: "fuzz.json") {
        // A pipeline that loads has its required stages and sane worker counts.
        precondition(pipeline.itemStages.first == .sniff)
        for stage in pipeline.itemStages { precondition((1...64).contains(pipeline.workers(for: stage))) }
    }
    return 0
}
