import Glibc

/// Threads of their own for work that runs beside the caller's (a pool's workers, a server's front door, a queue's
/// writer): started, never joined. Whoever needs to know that the work is done waits for it by other means (a
/// ``Condition``, a semaphore).
public enum DetachedThread {
    /// Starts a thread that runs `body` and ends; returns at once. The thread holds `body`, and what it captures,
    /// until `body` returns.
    ///
    /// Stops the process when the system cannot make a thread (it is out of threads or memory): the work cannot be
    /// done another way, and a caller waiting for it would wait forever. Input cannot bring that about: the callers
    /// start a bounded number of threads (pools of a configured size, a server's gate and log writer, at most one
    /// batch of notification deliveries at a time), so it means the machine itself is exhausted, as a failed
    /// allocation does, on which Swift stops the process too.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, runDetachedThread, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            fatalError("cannot start a thread: \(String(cString: strerror(created)))")
        }
        pthread_detach(thread)
    }

    /// What a new thread runs, handed to it through `pthread_create`'s context pointer.
    fileprivate final class Body: Sendable {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }
}

/// A new thread's start: takes over the ``DetachedThread/Body`` passed to it (released when it returns) and runs it.
private func runDetachedThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<DetachedThread.Body>.fromOpaque(context).takeRetainedValue().run()
    return nil
}
