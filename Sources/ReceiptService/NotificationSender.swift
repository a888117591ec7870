import Dispatch
import HTTPClient
import ReceiptLedger
import ReceiptModel
import StrictJSON
import Threads

/// Delivers the ledger's outbox of Server Notifications V2: a thread that takes the notifications that are due
/// (``TransactionLedger/claimDueNotifications(at:leaseUntil:limit:)``, so that instances sharing a ledger never
/// send one at once), POSTs each as `{"signedPayload": …}` to its URL, and records the attempt. HTTP 200 is
/// success; anything else is retried after the next delay of the retry schedule, with the same
/// `notificationUUID` and payload, until the schedule is spent. A notification whose sender died mid-attempt is
/// due again when its lease ends, so a crash loses none (the receiver drops a second delivery by its UUID).
final class NotificationSender: @unchecked Sendable {
    /// How long a taken notification is held before another sender may take it: over ``timeout``, since the
    /// notifications of a batch are sent side by side, and short, since it is how long one whose sender died waits.
    static let leaseSeconds: Int64 = 20
    /// The time a receiver has to answer one delivery.
    static let timeout = Duration.seconds(10)
    /// How often the outbox is read when nothing wakes the sender (retries falling due, other instances' work).
    static let pollInterval = Duration.seconds(1)
    /// The most notifications taken, and sent side by side, at once.
    static let batchSize = 8

    private let ledger: any TransactionLedger
    private let retrySeconds: [Int]
    private let clock: @Sendable () -> ReceiptDate
    private let log: @Sendable (String) -> Void
    private let client = HTTPClient(userAgent: "openreceipt-notifications", maximumBodyBytes: 4096)
    private let condition = Condition()
    private var woken = false
    private var stopping = false
    private var started = false
    private let finished = DispatchSemaphore(value: 0)

    /// A sender for `ledger`'s outbox with the retry schedule `retrySeconds`, reading the time from `clock` and
    /// writing one line to `log` for each failed attempt or ledger failure.
    init(
        ledger: any TransactionLedger, retrySeconds: [Int], clock: @escaping @Sendable () -> ReceiptDate,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.ledger = ledger
        self.retrySeconds = retrySeconds
        self.clock = clock
        self.log = log
    }

    /// Starts the sending thread; calling it again does nothing. Throws when the system cannot make the thread.
    func start() throws(ThreadStartError) {
        condition.lock()
        defer { condition.unlock() }
        guard !started, !stopping else { return }
        try DetachedThread.start { [self] in
            run()
            finished.signal()
        }
        started = true
    }

    /// Something was queued: look at the outbox now rather than at the next poll.
    func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread after the deliveries in progress (each bounded by ``timeout``) and waits for it.
    func stop() {
        condition.lock()
        let running = started && !stopping
        stopping = true
        condition.signal()
        condition.unlock()
        if running { finished.wait() }
    }

    private var isStopping: Bool {
        condition.withLock { stopping }
    }

    private func run() {
        while !isStopping {
            let sentAll = deliverDue()
            condition.lock()
            if !woken && !stopping && sentAll {
                _ = condition.wait(until: Deadline(after: Self.pollInterval))
            }
            woken = false
            condition.unlock()
        }
    }

    /// Delivers one batch of due notifications; false when the batch was full (more may be due at once).
    private func deliverDue() -> Bool {
        let now = clock()
        let claimed: [LedgerOutgoingNotification]
        do {
            claimed = try ledger.claimDueNotifications(
                at: now,
                leaseUntil: ReceiptDate(millisecondsSince1970: now.millisecondsSince1970 + Self.leaseSeconds * 1000),
                limit: Self.batchSize)
        } catch {
            log("notification outbox: \(error)")
            return true
        }
        // One thread per delivery: each mostly waits for its receiver, so a slow one holds up none of the others.
        // A delivery the system makes no thread for runs on this one.
        let done = DispatchGroup()
        for notification in claimed {
            done.enter()
            let delivery: @Sendable () -> Void = { [self] in
                deliver(notification)
                done.leave()
            }
            do {
                try DetachedThread.start(delivery)
            } catch {
                delivery()
            }
        }
        done.wait()
        return claimed.count < Self.batchSize
    }

    private func deliver(_ notification: LedgerOutgoingNotification) {
        var body: [UInt8] = []
        JSONObjectWriter.write(to: &body) { $0.add("signedPayload", string: notification.signedPayload) }
        let attempt: LedgerDeliveryAttempt
        do {
            let response = try client.post(
                notification.url, body: body, headers: [("Content-Type", "application/json")], timeout: Self.timeout)
            attempt = LedgerDeliveryAttempt(
                date: clock(), result: response.status == 200 ? .success : .unsuccessfulHTTPResponseCode,
                httpStatus: response.status)
        } catch {
            attempt = LedgerDeliveryAttempt(date: clock(), result: Self.result(of: error))
            log("notification \(notification.notificationUUID) to \(notification.url): \(error.message)")
        }
        let failures = notification.attempts.filter { $0.result != .success }.count + 1
        var next: ReceiptDate?
        if attempt.result != .success, failures <= retrySeconds.count {
            next = ReceiptDate(
                millisecondsSince1970: attempt.date.millisecondsSince1970 + Int64(retrySeconds[failures - 1]) * 1000)
        }
        do {
            _ = try ledger.recordDeliveryAttempt(
                notificationUUID: notification.notificationUUID, url: notification.url, attempt: attempt,
                nextAttemptDate: next)
        } catch {
            log("notification \(notification.notificationUUID): recording the attempt failed: \(error)")
        }
    }

    /// Apple's `sendAttemptResult` for a delivery that got no response.
    static func result(of error: HTTPClientError) -> LedgerDeliveryAttempt.Result {
        switch error.code {
        case .timedOut: .timedOut
        case .connectionFailed: .socketIssue
        case .noResponse: .noResponse
        case .prematureClose: .prematureClose
        case .invalidResponse: .invalidResponse
        case .unsupportedURL, .invalidRequest: .other
        }
    }
}
