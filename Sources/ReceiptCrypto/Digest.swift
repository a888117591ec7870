internal import CReceiptOpenSSL

/// The digest algorithms of app receipts: SHA-1 (older receipts, device binding) and SHA-256.
public enum DigestAlgorithm: String, Hashable, Sendable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"

    /// The digest's position in `allCases`, for tables with one entry per digest.
    var position: Int {
        switch self {
        case .sha1: 0
        case .sha256: 1
        }
    }

    /// The digest of `bytes`.
    public func hash(_ bytes: [UInt8]) -> [UInt8] {
        hash(bytes[...])
    }

    /// The digest of `input`. Written into an array of the digest's size, the one allocation: copying a prefix of
    /// a larger one made a second, through the standard library's unspecialized array allocation (a generic
    /// metadata lookup each time, 530 instructions a receipt).
    public func hash(_ input: ArraySlice<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        let ok = input.withUnsafeBytes { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                EVP_Digest(
                    inputBuffer.baseAddress, inputBuffer.count, outputBuffer.baseAddress, &length, implementation, nil)
            }
        }
        // EVP_Digest only fails when the algorithm is unavailable, which `implementation` rules out at startup.
        return ok == 1 && Int(length) == size ? output : []
    }

    /// The digest's length in bytes.
    var size: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        }
    }

    /// The OpenSSL implementation, fetched once per process (fetching per call is slow in OpenSSL 3).
    var implementation: OpaquePointer? {
        switch self {
        case .sha1: FetchedDigests.shared.sha1
        case .sha256: FetchedDigests.shared.sha256
        }
    }
}

/// Fetched `EVP_MD` objects. They are immutable and reference counted by OpenSSL, so sharing them across threads
/// is safe.
private final class FetchedDigests: @unchecked Sendable {
    static let shared = FetchedDigests()
    let sha1 = EVP_MD_fetch(nil, "SHA1", nil)
    let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
}

/// Compares two byte strings in time that depends only on their lengths (for digests and hashes).
public func constantTimeEquals(_ left: ArraySlice<UInt8>, _ right: ArraySlice<UInt8>) -> Bool {
    guard left.count == right.count else { return false }
    if left.isEmpty { return true }
    return left.withUnsafeBytes { a in
        right.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) }
    } == 0
}

/// ``constantTimeEquals(_:_:)`` for whole arrays.
public func constantTimeEquals(_ left: [UInt8], _ right: [UInt8]) -> Bool {
    constantTimeEquals(left[...], right[...])
}

/// `count` bytes from OpenSSL's cryptographically secure generator.
public func secureRandomBytes(_ count: Int) throws(CryptoError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else {
        throw CryptoError(.operationFailed("drawing random bytes"))
    }
    return bytes
}

/// The OpenSSL library version in use, e.g. "OpenSSL 3.0.19 27 Jan 2026".
public var openSSLVersion: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
