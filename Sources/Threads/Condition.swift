import Glibc

/// A lock and a condition variable over it (`pthread_mutex_t` and `pthread_cond_t`), for state that threads wait
/// on: hold the lock, check the state, ``wait()`` while it is not what you need; whoever changes it, holding the
/// lock, calls ``signal()`` or ``broadcast()``. A waiter can wake without a signal (POSIX allows spurious
/// wake-ups), so a waiter always checks its state again in a loop.
///
/// Timed waits run on the monotonic clock (``Deadline``), so changing the system's date neither cuts them short nor
/// stretches them.
///
/// `@unchecked Sendable`: the mutex and the condition variable are made to be used from every thread; they live at
/// addresses of their own that never move, allocated here and destroyed and freed in `deinit`.
public final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// An unlocked lock with no waiter.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let made = (pthread_mutex_init(mutex, nil), pthread_cond_init(condition, &attributes))
        pthread_condattr_destroy(&attributes)
        // Linux's mutexes and condition variables allocate nothing: initialising them cannot fail.
        precondition(made == (0, 0), "pthread_mutex_init or pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the lock, waiting for it while another thread holds it. Not reentrant: the thread holding the lock
    /// must not take it again.
    public func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Lets go of the lock, which the calling thread holds.
    public func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` holding the lock, and lets go of it when `body` returns or throws.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Lets go of the lock and sleeps until another thread signals (or a spurious wake-up), then takes the lock
    /// again before returning. The calling thread holds the lock.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// ``wait()``, but returns no later than shortly after `deadline`: true when woken before it (by a signal or
    /// spuriously), false once it has passed. Either way the lock is held again on return.
    public func wait(until deadline: Deadline) -> Bool {
        var time = deadline.absoluteTime
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    /// Wakes one thread waiting, if any. Call it holding the lock, after changing what the waiters look at.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting. Call it holding the lock, after changing what the waiters look at.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
