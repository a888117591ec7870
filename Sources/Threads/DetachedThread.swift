import CReceiptThreadPlacement
import Glibc

/// Threads of their own for work that runs beside the caller's (a pool's workers, a server's front door, a queue's
/// writer): started, never joined. Whoever needs to know that the work is done waits for it by other means (a
/// ``Condition``, a semaphore).
public enum DetachedThread {
    /// Starts a thread that runs `body` and ends; returns at once. The thread holds `body`, and what it captures,
    /// until `body` returns. Throws when the system cannot make a thread (it is out of threads or memory); `body`
    /// is then released without running.
    ///
    /// The thread starts on another CPU than the caller's, when the caller may use more than one, and may then run
    /// on any of the caller's CPUs. Linux otherwise queues a new thread on its creator's CPU, where it waits for the
    /// creator to block or for the load balancer, a few milliseconds later, while the other CPUs sit idle: two
    /// pieces of work started side by side ran one after the other.
    public static func start(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        try start(body) { receipt_thread_start_elsewhere(&$0, &$1) }
    }

    /// Starts a thread as ``start(_:)`` does, as member `member` (from 0) of a group started together, such as a
    /// pool's workers. It starts on the caller's CPU `member + 1` places after the caller's own, counting the CPUs
    /// the caller may use in order and around, so that a group as large as the CPUs starts one on each, the last on
    /// the caller's own (which a caller that then waits for the group leaves free). Started each beside the caller,
    /// they would all start on the other CPU of two and take turns there until the load balancer moved one.
    public static func start(member: Int, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let offset = Int32(clamping: member &+ 1)
        try start(body) { receipt_thread_start_after(&$0, &$1, offset) }
    }

    /// Starts a thread that runs `body`, created with the CPUs `place` sets in its attributes when it returns 1;
    /// `place` also fills in the caller's CPUs, which the thread takes back.
    private static func start(
        _ body: @escaping @Sendable () -> Void, placing place: (inout pthread_attr_t, inout cpu_set_t) -> Int32
    ) throws(ThreadStartError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        var allowed = cpu_set_t()
        let placed = place(&attributes, &allowed) == 1
        var created = create(Body(body, allowed: placed ? allowed : nil), attributes: &attributes)
        if created != 0 && placed {
            created = create(Body(body, allowed: nil), attributes: nil)
        }
        guard created == 0 else { throw ThreadStartError(reason: String(cString: strerror(created))) }
    }

    /// Creates a detached thread that runs `body`; returns pthread_create's result. On failure `body` is released.
    private static func create(_ body: Body, attributes: UnsafePointer<pthread_attr_t>?) -> Int32 {
        let context = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, attributes, runDetachedThread, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return created
        }
        pthread_detach(thread)
        return 0
    }

    /// What a new thread runs, and the CPUs it takes back when it was started away from its creator's CPU.
    fileprivate final class Body: Sendable {
        let run: @Sendable () -> Void
        let allowed: cpu_set_t?

        init(_ run: @escaping @Sendable () -> Void, allowed: cpu_set_t?) {
            self.run = run
            self.allowed = allowed
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

/// A new thread's start: takes over the ``DetachedThread/Body`` passed to it (released when it returns), takes back
/// its creator's CPUs and runs it.
private func runDetachedThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let body = Unmanaged<DetachedThread.Body>.fromOpaque(context).takeRetainedValue()
    if var allowed = body.allowed {
        // Should the system refuse, the thread keeps to the other CPUs: it may wait for them, and still runs.
        _ = receipt_thread_allow(&allowed)
    }
    body.run()
    return nil
}
