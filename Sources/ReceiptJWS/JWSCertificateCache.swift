import ReceiptCrypto
import Synchronization

/// Decoded `x5c` certificates keyed by their exact DER bytes, so the certificates every JWS from the same signer
/// repeats are decoded once (OpenSSL 3 spends about 200 µs decoding each one). Bounded, and safe to share between
/// threads and verifiers: a decoded certificate does not depend on what anyone trusts.
public final class JWSCertificateCache: Sendable {
    /// Enough for Apple's signing leaves and intermediates over several years, with room to spare.
    public static let defaultCapacity = 64

    private let entries = Mutex<[[UInt8]: Certificate]>([:])
    private let capacity: Int

    public init(capacity: Int = JWSCertificateCache.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Holds `certificates`, decoded already, for their bytes: a JWS whose `x5c` carries a copy of one of them
    /// (Apple's carry their root) takes it from here rather than decoding it again.
    func keep(_ certificates: [Certificate]) {
        for certificate in certificates { store(certificate) }
    }

    /// The certificate whose DER encoding is exactly `der`, decoded now or earlier.
    public func certificate(_ der: [UInt8]) throws(CryptoError) -> Certificate {
        if let cached = entries.withLock({ $0[der] }) { return cached }
        let certificate = try Certificate(derEncoded: der)
        store(certificate)
        return certificate
    }

    private func store(_ certificate: Certificate) {
        entries.withLock { entries in
            // When full, start again: simple, bounded, and the working set refills with the next few JWS.
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[certificate.derEncoded] = certificate
        }
    }

    /// How many certificates are held.
    public var count: Int { entries.withLock { $0.count } }
}
