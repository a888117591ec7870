/// A value worked out on a thread of its own while the caller does something else, and waited for when needed:
/// for two pieces of work that need each other's results only at the end.
public final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    /// Guards `result`, and is what ``value`` waits on.
    private let condition = Condition()
    private var result: Value?

    /// Starts a thread that runs `body`; returns at once.
    public init(computing body: @escaping @Sendable () -> Value) {
        DetachedThread.start { [self] in
            let computed = body()
            condition.withLock {
                result = computed
                condition.broadcast()
            }
        }
    }

    /// What `body` returned, waiting for it while it runs.
    public var value: Value {
        condition.withLock {
            while true {
                if let result { return result }
                condition.wait()
            }
        }
    }
}
