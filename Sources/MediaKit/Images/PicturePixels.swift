import CShims
import CVips
import MediaFormats

/// A picture decoded to pixels for its caller to compose (``DecodeTask/pixels``):
/// what a contact sheet's tiles are made of, decoded where decoding belongs
/// (in a sandboxed helper, when the caller uses one: the thumbnails' bytes were
/// chosen by helpers, and the process that composes the sheet decodes none).
/// Only the libvips loader of the request's format may read the file (checked
/// before it is built), within the pixel limit; the picture is shrunk on load
/// to fit the request's thumbnail size, never enlarged, EXIF orientation
/// applied, alpha flattened over white, as 8-bit sRGB.
enum PicturePixels {
    static func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        let label = request.label
        let name = request.format.name
        guard let spec = request.thumbnail, spec.size >= 1 else {
            throw MediaError(.unsupported, "\(label): no size was asked for its pixels")
        }
        guard let loader = VipsImageStep.loaders[request.format.id]?.loader else {
            throw MediaError(.unsupported, "\(label): no libvips loader here decodes \(name) to pixels")
        }
        let input = ImageInput.descriptor(descriptor)
        Vips.loadModule(providing: loader)
        let chosen: String
        do { chosen = try input.loader() } catch {
            throw MediaError(.damaged, "\(label): not a readable \(name) image: \(error)")
        }
        guard chosen.hasPrefix(loader) else {
            throw MediaError(
                .contentMismatch, "\(label): looks like \(name) but libvips would read it with \(chosen); refused")
        }
        let header: ImageHeader
        do { header = try ImageHeader.read(input, loader: chosen) } catch {
            throw MediaError(.damaged, "\(label): not a readable \(name) image: \(error)")
        }
        try PixelLimit(request.pixelLimit).check(header.storedWidth, header.storedHeight, label: label)
        do {
            let pixels = try Thumbnailer.thumbnail(input, header: header, spec: spec) { (image) throws(VipsError) in
                try image.packedRGB()
            }
            var decoded = DecodedMedia(facts: MediaFacts(kind: .image))
            decoded.pixels = pixels
            return decoded
        } catch {
            let kind: MediaError.Kind = error.wasKilled ? .timeLimit : LibraryMessages.kind(of: error) ?? .damaged
            throw MediaError(kind, "\(label): cannot decode \(name) image: \(error)")
        }
    }
}

extension VipsImageHandle {
    /// The picture as ``DecodedPixels``: three-band sRGB uchar (``srgb8()``;
    /// from its ICC profile's colours, ``inSRGBColours()``),
    /// computed and copied out of libvips (`vips_image_write_to_memory`, rows
    /// packed), its size checked against what libvips wrote.
    func packedRGB() throws(VipsError) -> DecodedPixels {
        let image = try inSRGBColours().srgb8()
        let width = image.width
        let height = image.height
        guard image.bands == 3, width > 0, height > 0, width <= 1 << 15, height <= 1 << 15 else {
            throw VipsError("pixels", message: "a \(width)×\(height) picture of \(image.bands) bands")
        }
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw VipsError("vips_image_write_to_memory")
        }
        defer { g_free(memory) }
        guard size == width * height * 3 else {
            throw VipsError("vips_image_write_to_memory", message: "\(size) bytes for a \(width)×\(height) picture")
        }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: memory, count: size))
        guard let pixels = DecodedPixels(width: width, height: height, stride: width * 3, bytes: bytes) else {
            throw VipsError("pixels", message: "a \(width)×\(height) picture")
        }
        return pixels
    }
}
