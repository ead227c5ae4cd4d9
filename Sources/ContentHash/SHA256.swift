import CCrypto

/// SHA-256 of bytes fed a piece at a time (OpenSSL's EVP digest: `EVP_MD_CTX`,
/// `EVP_DigestInit_ex(EVP_sha256())`, `EVP_DigestUpdate`, `EVP_DigestFinal_ex`),
/// so a copy hashes what it copies in the same pass. One value per stream; not
/// shared between threads.
package final class SHA256 {
    private let context: OpaquePointer

    /// A fresh digest.
    package init() {
        // Allocation failure of a few hundred bytes: nothing sensible is left to do.
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("OpenSSL cannot start a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds `bytes`.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest of everything fed: 32 bytes.
    package func digest() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
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
