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

    func verdict(for key: [DERKey]) -> ChainVerdict? {
        entries.value(for: key)
    }

    func store(_ verdict: ChainVerdict, for key: [DERKey]) {
        entries.store(verdict, for: key)
    }
}
