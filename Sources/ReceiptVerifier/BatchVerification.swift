import Dispatch
import Glibc
import Synchronization

extension ReceiptVerifier {
    /// Verifies many receipts on `threads` threads at once; the results come back in input order.
    ///
    /// Everything the verifier caches is shared by the threads, so receipts signed by the same certificates cost
    /// one certificate decode in all. Memory grows with `inputs.count`: to verify an unbounded stream with flat
    /// memory, call this on successive chunks.
    public func verify(
        many inputs: [[UInt8]],
        options: VerificationOptions = VerificationOptions(),
        threads: Int = defaultThreadCount
    ) -> [Result<VerifiedReceipt, ReceiptVerificationError>] {
        InputOrder.map(inputs, threads: threads) { input in
            Result { () throws(ReceiptVerificationError) in try verify(input, options: options) }
        }
    }

    /// The number of processors the system makes available.
    public static var defaultThreadCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// Work spread over threads with its results kept in input order, for verifying many inputs at once.
public enum InputOrder {
    /// `body` applied to every input on up to `threads` threads; the results in the order of `inputs`.
    public static func map<Input: Sendable, Output: Sendable>(
        _ inputs: [Input], threads: Int, _ body: @Sendable (Input) -> Output
    ) -> [Output] {
        let results = Mutex([Output?](repeating: nil, count: inputs.count))
        let workers = max(1, min(threads, inputs.count))
        let next = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < inputs.count else { return }
                let result = body(inputs[index])
                results.withLock { $0[index] = result }
            }
        }
        // Every index below inputs.count was claimed by exactly one worker and filled.
        return results.withLock { $0.compactMap { $0 } }
    }
}
