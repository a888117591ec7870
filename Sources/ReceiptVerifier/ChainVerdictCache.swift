import ReceiptCrypto

/// What full validation without validity periods said of one chain, with the window in which every certificate
/// of the validated chain is valid (a failure holds at every time).
struct ChainVerdict: Sendable {
    let result: Result<[Certificate], ReceiptVerificationError>
    /// Inclusive, in seconds since 1970, as OpenSSL compares times; empty for a failure.
    let validityWindow: ClosedRange<Int64>

    init(result: Result<[Certificate], ReceiptVerificationError>) {
        self.result = result
        guard case .success(let chain) = result, let from = chain.map(\.notBefore).max(),
            let until = chain.map(\.notAfter).min(), from <= until
        else {
            validityWindow = Int64.max...Int64.max
            return
        }
        validityWindow = from...until
    }
}

/// Chain verdicts of one verifier (whose anchors and policies never change), keyed by the exact bytes of the
/// certificates a receipt carries, signer first. Bounded and safe to use from several threads.
final class ChainVerdictCache: Sendable {
    static let capacity = 256

    private let entries = ReadMostlyCache<[DERKey], ChainVerdict>(capacity: ChainVerdictCache.capacity)

    init() {}

    /// A cache of its own holding each verdict `other` holds now on certificates that `copies` (copies by the
    /// original's DER bytes) holds, keyed by the copies' bytes; the chain's other certificates (its anchor) are
    /// copied (``Certificate/independentCopy()``). A verdict on certificates `copies` lacks is left out: the chain
    /// is validated again if it comes.
    init(copying other: ChainVerdictCache, copies: [DERKey: Certificate]) {
        func copy(_ certificate: Certificate) -> Certificate {
            copies[DERKey(certificate.derEncoded[...])] ?? certificate.independentCopy()
        }
        for (key, verdict) in other.entries.entries {
            let copied = key.compactMap { copies[$0] }
            guard copied.count == key.count else { continue }
            entries.store(
                ChainVerdict(result: verdict.result.map { $0.map(copy) }),
                for: copied.map { DERKey($0.derEncoded[...]) })
        }
    }

    func verdict(for key: [DERKey]) -> ChainVerdict? {
        entries.value(for: key)
    }

    func store(_ verdict: ChainVerdict, for key: [DERKey]) {
        entries.store(verdict, for: key)
    }

    /// How many verdicts are held.
    var count: Int { entries.count }
}
