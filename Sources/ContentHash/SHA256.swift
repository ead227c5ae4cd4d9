import CNettle

/// SHA-256 of bytes fed a piece at a time (Nettle's `sha256_ctx`: `nettle_sha256_init`,
/// `nettle_sha256_update`, `nettle_sha256_digest`), so a copy hashes what it copies in
/// the same pass. One value per stream; not shared between threads.
package final class SHA256 {
    private let context: UnsafeMutablePointer<sha256_ctx>

    /// A fresh digest.
    package init() {
        context = .allocate(capacity: 1)
        nettle_sha256_init(context)
    }

    deinit { context.deallocate() }

    /// Feeds `bytes`.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        nettle_sha256_update(context, bytes.count, base.assumingMemoryBound(to: UInt8.self))
    }

    /// The digest of everything fed: 32 bytes. Nettle starts the digest afresh after it,
    /// as OpenSSL's `EVP_DigestFinal_ex` ended it: call it once.
    package func digest() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_SIZE))
        nettle_sha256_digest(context, digest.count, &digest)
        return digest
    }

    /// The digest of everything fed, as 64 lower-case hexadecimal digits.
    package func finish() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest() {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The SHA-256 of `bytes`.
    package static func hex(of bytes: some Collection<UInt8>) -> String {
        let digest = SHA256()
        Array(bytes).withUnsafeBytes { digest.update($0) }
        return digest.finish()
    }
}
