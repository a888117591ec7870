import Glibc
import ReceiptCrypto

/// Decoded certificates keyed by their exact DER bytes, so a certificate that arrives in many receipts is decoded
/// once (OpenSSL 3 spends about 200 µs decoding each certificate's key). Bounded and safe to share between threads
/// and between verifiers: a decoded certificate does not depend on what anyone trusts.
public final class CertificateCache: Sendable {
    /// Enough for every signing and intermediate certificate a backend sees, with room to spare.
    public static let defaultCapacity = 256

    // When full, it starts again: simple, bounded, and the working set refills in a few receipts.
    private let entries: ReadMostlyCache<DERKey, Certificate>

    public init(capacity: Int = CertificateCache.defaultCapacity) {
        entries = ReadMostlyCache(capacity: capacity)
    }

    /// A cache of its own holding a copy (``Certificate/independentCopy()``) of each certificate `other` holds now,
    /// and `copies` each of them by the original's DER bytes.
    init(copying other: CertificateCache, copies: inout [DERKey: Certificate]) {
        entries = ReadMostlyCache(capacity: other.entries.capacity)
        for original in other.entries.entries.values {
            let copy = original.independentCopy()
            copies[DERKey(original.derEncoded[...])] = copy
            entries.store(copy, for: DERKey(copy.derEncoded[...]))
        }
    }

    /// Holds `certificates`, decoded already, for their bytes: a receipt that carries a copy of one of them (Apple's
    /// carry their root) takes it from here rather than decoding it again.
    func keep(_ certificates: [Certificate]) {
        for certificate in certificates { store(certificate) }
    }

    /// The certificate whose DER encoding is exactly `der`, decoded now or earlier.
    public func certificate(_ der: ArraySlice<UInt8>) throws(CryptoError) -> Certificate {
        if let cached = entries.value(for: DERKey(der)) { return cached }
        let certificate = try Certificate(derEncoded: der)
        store(certificate)
        return certificate
    }

    private func store(_ certificate: Certificate) {
        entries.store(certificate, for: DERKey(certificate.derEncoded[...]))
    }

    /// How many certificates are held.
    public var count: Int { entries.count }
}

/// Exact bytes as a dictionary key: hashed on their length and last 8 bytes (a certificate ends with its
/// signature, whose bytes look random), compared in full.
struct DERKey: Hashable, Sendable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    func hash(into hasher: inout Hasher) {
        var tail: UInt64 = 0
        for byte in bytes.suffix(8) { tail = tail << 8 | UInt64(byte) }
        hasher.combine(bytes.count)
        hasher.combine(tail)
    }

    static func == (lhs: DERKey, rhs: DERKey) -> Bool {
        bytesEqual(lhs.bytes, rhs.bytes)
    }
}

/// Whether `lhs` and `rhs` hold the same bytes, compared with `memcmp`.
func bytesEqual(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return lhs.withUnsafeBytes { a in
        rhs.withUnsafeBytes { b in
            guard let left = a.baseAddress, let right = b.baseAddress else { return true }
            return memcmp(left, right, a.count) == 0
        }
    }
}
