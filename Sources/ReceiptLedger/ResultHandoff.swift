internal import Dispatch
internal import Synchronization

/// A result handed from the thread that has it to one thread waiting for it: how a caller waits for a write whose
/// completion runs elsewhere.
final class ResultHandoff<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, LedgerError>?>(nil)
    private let given = DispatchSemaphore(value: 0)

    private init() {}

    /// Calls `start` with a completion, waits until that completion is called (on any thread, or before `start`
    /// returns) and returns what it was given. The first call of the completion counts.
    static func waiting(
        for start: (@escaping @Sendable (Result<Value, LedgerError>) -> Void) -> Void
    ) -> Result<Value, LedgerError> {
        let handoff = ResultHandoff()
        start { outcome in handoff.give(outcome) }
        handoff.given.wait()
        return handoff.result.withLock { $0 }
            ?? .failure(LedgerError(.storage, "a write was answered without a result"))
    }

    private func give(_ outcome: Result<Value, LedgerError>) {
        let first = result.withLock { (result) -> Bool in
            guard result == nil else { return false }
            result = outcome
            return true
        }
        if first { given.signal() }
    }
}
