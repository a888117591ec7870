import Glibc

/// How far a long run has come, on standard error, only when standard error is a terminal: one line redrawn in
/// place, `receipt verify: 12000 of 20000 files, 9800/s, 1 s left`, at most four times a second, and cleared when
/// the run ends, so that what follows it starts on a clean line. Scripts and CI, whose standard error is a pipe or
/// a file, see nothing of it.
final class Progress {
    /// Redraws at most this often.
    static let interval = 0.25

    private let label: String
    private let unit: String
    private let total: Int?
    private let started = Progress.now()
    private var done = 0
    private var drawn: Double?

    /// A display for `total` (when known) items named `unit` (`files`), each line starting with `label`; nil when
    /// standard error is not a terminal.
    init?(label: String, unit: String, total: Int?, isTerminal: Bool = isatty(STDERR_FILENO) == 1) {
        guard isTerminal else { return nil }
        self.label = label
        self.unit = unit
        self.total = total
    }

    /// `count` more items are done: the line is redrawn when the last drawing is old enough (and the first time).
    func advance(by count: Int = 1) {
        done += count
        let now = Self.now()
        if let drawn, now - drawn < Self.interval { return }
        drawn = now
        Self.write("\r\u{1B}[K" + line(elapsed: now - started))
    }

    /// Clears the line, before anything else is written to the terminal (once: calling it again does nothing); the
    /// next ``advance(by:)`` draws it again at once.
    func finish() {
        guard drawn != nil else { return }
        drawn = nil
        Self.write("\r\u{1B}[K")
    }

    /// `label: done of total unit, rate/s, time left` (without what is not known yet).
    func line(elapsed: Double) -> String {
        var text = "\(label): \(done)"
        if let total { text += " of \(total)" }
        text += " \(unit)"
        guard elapsed > 0 else { return text }
        let rate = Double(done) / elapsed
        text += ", \(Int(rate.rounded()))/s"
        if let total, rate > 0, total > done {
            text += ", \(Self.duration(Double(total - done) / rate)) left"
        }
        return text
    }

    /// `42 s`, `3 min 5 s`, `2 h 4 min`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }

    private static func write(_ text: String) {
        Files.writeStandardError(text)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
