import Glibc

/// A moment on the monotonic clock (`CLOCK_MONOTONIC`), which setting the system's date does not move: the end of
/// a wait. It is counted in nanoseconds since an unspecified start (the boot, on Linux), so it means nothing
/// outside this process's run.
public struct Deadline: Comparable, Sendable {
    /// Nanoseconds on the monotonic clock.
    let nanoseconds: Int64

    /// The moment of the call.
    public static var now: Deadline {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Deadline(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// `duration` after the moment of the call. A duration too long to count (over about 290 years) is the
    /// farthest moment that can be counted; a negative one is in the past.
    public init(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (span, spanOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        let (sum, sumOverflow) = Deadline.now.nanoseconds.addingReportingOverflow(span)
        nanoseconds = overflow || spanOverflow || sumOverflow ? (duration < .zero ? .min : .max) : sum
    }

    init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The moment as `pthread_cond_timedwait` takes it; a moment before the clock's start is its start.
    var absoluteTime: timespec {
        let clamped = max(nanoseconds, 0)
        return timespec(tv_sec: Int(clamped / 1_000_000_000), tv_nsec: Int(clamped % 1_000_000_000))
    }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
