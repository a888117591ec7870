import Glibc

/// Threads of their own for work that runs beside the caller's (a pool's workers, a server's front door, a queue's
/// writer): started, never joined. Whoever needs to know that the work is done waits for it by other means (a
/// ``Condition``, a semaphore).
public enum DetachedThread {
    /// Starts a thread that runs `body` and ends; returns at once. The thread holds `body`, and what it captures,
    /// until `body` returns. Throws when the system cannot make a thread (it is out of threads or memory); `body`
    /// is then released without running.
    public static func start(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, runDetachedThread, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw ThreadStartError(reason: String(cString: strerror(created)))
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

/// Why a thread could not be started: the system's words (`pthread_create`'s error, such as "Resource temporarily
/// unavailable" when the process may make no more threads).
public struct ThreadStartError: Error, Hashable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "cannot start a thread: \(reason)" }
}

/// A new thread's start: takes over the ``DetachedThread/Body`` passed to it (released when it returns) and runs it.
private func runDetachedThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<DetachedThread.Body>.fromOpaque(context).takeRetainedValue().run()
    return nil
}
