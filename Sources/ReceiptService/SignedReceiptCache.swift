import ReceiptCrypto
import ReceiptModel
import Synchronization

/// Receipts the service has signed, by the content they cover, so that the same ledger state is signed once:
/// signing (RSA especially) is the dearest thing a request can cost, and `/verifyReceipt` is open to anyone.
///
/// The key is the SHA-256 of the receipt's payload with its creation date left out, so a cached receipt is
/// reused, with the creation date of its first signing, for as long as the purchases, their refunds and the rest
/// of the receipt stay the same. Bounded in entries and bytes; the oldest entries go first.
final class SignedReceiptCache: Sendable {
    private struct State {
        var receipts: [[UInt8]: [UInt8]] = [:]
        var order: [[UInt8]] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    let maximumEntries: Int
    let maximumBytes: Int

    init(maximumEntries: Int = 4096, maximumBytes: Int = 32 << 20) {
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
    }

    /// What identifies `receipt`'s content: everything but its creation date.
    static func key(_ receipt: Receipt) -> [UInt8] {
        var undated = receipt
        undated.creationDate = .earliest
        let payload = undated.payloadDER
        return DigestAlgorithm.sha256.hash(payload[...])
    }

    /// The receipt signed for `key`, if it is still cached.
    func receipt(for key: [UInt8]) -> [UInt8]? {
        state.withLock { $0.receipts[key] }
    }

    /// Keeps `signed` for `key`, dropping the oldest entries beyond the bounds. A receipt larger than the whole
    /// budget is not kept.
    func keep(_ signed: [UInt8], for key: [UInt8]) {
        guard signed.count <= maximumBytes else { return }
        state.withLock { state in
            guard state.receipts.updateValue(signed, forKey: key) == nil else { return }
            state.order.append(key)
            state.bytes += signed.count
            while state.order.count > maximumEntries || state.bytes > maximumBytes {
                let oldest = state.order.removeFirst()
                state.bytes -= state.receipts.removeValue(forKey: oldest)?.count ?? 0
            }
        }
    }

    /// How many receipts are cached.
    var count: Int { state.withLock { $0.receipts.count } }
}
