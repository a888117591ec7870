/// A value worked out on a thread of its own while the caller does something else, and waited for when needed:
/// for two pieces of work that need each other's results only at the end.
public final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    /// Guards `result`, and is what ``value`` waits on.
    private let condition = Condition()
    private var result: Value?

    /// Starts a thread that runs `body` and returns at once; when the system cannot make a thread, runs `body` on
    /// the calling thread before returning, so the value is there either way.
    public init(computing body: @escaping @Sendable () -> Value) {
        do {
            try DetachedThread.start { [self] in keep(body()) }
        } catch {
            keep(body())
        }
    }

    private func keep(_ computed: Value) {
        condition.withLock {
            result = computed
            condition.broadcast()
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
