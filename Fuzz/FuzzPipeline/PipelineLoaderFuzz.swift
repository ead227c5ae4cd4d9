// Fuzz target: PipelineDefinition.decode on arbitrary bytes (scripts/fuzz.sh).
import Foundation
import FuzzReplay
import ShareIngestCore

func check(_ bytes: Data) {
    if let pipeline = try? PipelineDefinition.decode(bytes, file: "fuzz.json") {
        // A pipeline that loads has its required stages and sane worker counts,
        // and reads back from its own encoding unchanged.
        precondition(pipeline.itemStages.first == .sniff)
        for stage in pipeline.itemStages { precondition((1...64).contains(pipeline.workers(for: stage))) }
        precondition(
            (try? PipelineDefinition.decode(Data(pipeline.encodedJSON().utf8), file: "again.json")) == pipeline)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    check(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
    @main struct Replay { static func main() { FuzzReplay.run(check) } }
#endif
