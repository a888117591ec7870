private import CReceiptSockets
private import Dispatch
internal import Glibc
private import Threads

/// The server's front door, one thread that owns the listening socket. It accepts every connection at once (so none
/// waits in the kernel's backlog), answers those over a limit with 503, and reads each new connection's first
/// request head itself, without consuming it (`MSG_PEEK`), until the head is complete and follows
/// ``RequestRules``; only then is the socket handed to libmicrohttpd, which reads the same bytes again.
///
/// So a client that sends nothing, or a head one byte at a time, or junk, holds no libmicrohttpd connection and
/// is closed when ``HTTPServerConfiguration/requestHeaderTimeoutSeconds`` (or the idle timeout) passes, however
/// steadily it sends; and a first head libmicrohttpd 0.9.75 would answer wrongly (it writes its status line and
/// headers twice for a malformed `Content-Length`) never reaches it. Later heads of a kept-alive connection are
/// libmicrohttpd's to read; ``MicroHTTPDErrorAnswers`` answers what it refuses there. The same thread runs the watchdog that shuts down
/// connections libmicrohttpd serves once their head or body deadline passes (``ConnectionTable``).
///
/// Every refusal is one complete response with `Connection: close`, then a lingering close: the socket is shut
/// for writing and what the client still sends is read and dropped for a moment, so that closing with unread data
/// does not reset the connection before the client has read the answer.
///
/// `@unchecked Sendable`: everything but `table`, `handOff` and the descriptors' numbers is touched only by the
/// gate's thread; ``stop()`` only writes to `wakeup` and waits.
final class ConnectionGate: @unchecked Sendable {
    /// Hands the socket of `record`, whose first head is complete, to the daemon `record` names; false when the
    /// daemon refused it (it has then closed the socket).
    typealias HandOff = @Sendable (_ record: ServedConnection) -> Bool

    private struct Pending {
        let client: ClientKey
        let address: sockaddr_storage
        let accepted: Int64
        var lastActivity: Int64
        /// How many bytes the last look at the socket saw.
        var seen = 0
        /// Whether the socket is in the gate's epoll set: not while the head that came with the connection is read.
        var watched = false
    }

    private let listenDescriptor: Int32
    private let epoll: Int32
    private let wakeup: Int32
    private let table: ConnectionTable
    private let handOff: HandOff
    private let headerTimeout: Int64
    private let idleTimeout: Int64
    private let maximumBodyBytes: Int
    private let maximumLingering: Int
    private let stopped = DispatchSemaphore(value: 0)

    private var pending: [Int32: Pending] = [:]
    /// Where a pending head is peeked into.
    private var peekBuffer = [UInt8](repeating: 0, count: RequestRules.maximumHeadBytes + 1)
    /// Refused connections being drained before they are closed, with when to close them anyway.
    private var lingering: [Int32: Int64] = [:]
    /// Set when accepting stopped before the backlog was empty (too many at once, or out of descriptors), since
    /// the listening socket is edge-triggered and will not signal those again.
    private var acceptBacklog = false

    /// How long a refused connection is drained before it is closed.
    private static let lingerNanoseconds: Int64 = 2_000_000_000
    /// How often the watchdog looks at the daemons' connections, at most this long apart.
    private static let tickMilliseconds: Int32 = 100
    private static let acceptsPerRound = 256

    /// Takes over `listenDescriptor` (closed by the gate when it stops, or here when it cannot start) and starts
    /// the gate's thread.
    static func start(
        listenDescriptor: Int32, configuration: HTTPServerConfiguration, table: ConnectionTable,
        handOff: @escaping HandOff
    ) -> ConnectionGate? {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wakeup = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard epoll >= 0, wakeup >= 0,
            register(listenDescriptor, in: epoll, events: EPOLLIN.rawValue | EPOLLET.rawValue),
            register(wakeup, in: epoll, events: EPOLLIN.rawValue)
        else {
            for descriptor in [epoll, wakeup, listenDescriptor] where descriptor >= 0 {
                close(descriptor)
            }
            return nil
        }
        let gate = ConnectionGate(
            listenDescriptor: listenDescriptor, epoll: epoll, wakeup: wakeup, table: table, handOff: handOff,
            headerTimeout: Int64(configuration.requestHeaderTimeoutSeconds) * 1_000_000_000,
            idleTimeout: Int64(configuration.connectionTimeoutSeconds) * 1_000_000_000,
            maximumBodyBytes: configuration.maximumBodyBytes,
            maximumLingering: max(2 * configuration.maximumConnections, 256))
        do {
            try DetachedThread.start { gate.run() }
        } catch {
            // The gate owns its descriptors from here and holds no connections yet.
            gate.closeEverything()
            return nil
        }
        return gate
    }

    private init(
        listenDescriptor: Int32, epoll: Int32, wakeup: Int32, table: ConnectionTable, handOff: @escaping HandOff,
        headerTimeout: Int64, idleTimeout: Int64, maximumBodyBytes: Int, maximumLingering: Int
    ) {
        self.listenDescriptor = listenDescriptor
        self.epoll = epoll
        self.wakeup = wakeup
        self.table = table
        self.handOff = handOff
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumLingering = maximumLingering
    }

    /// Closes the listening socket (new connections are refused from then on) and every connection the gate still
    /// holds, and waits for the thread to end. Call once.
    func stop() {
        var one: UInt64 = 1
        _ = write(wakeup, &one, MemoryLayout<UInt64>.size)
        stopped.wait()
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var running = true
        while running {
            let ready = epoll_wait(epoll, &events, Int32(events.count), waitMilliseconds())
            for event in events.prefix(max(Int(ready), 0)) {
                let descriptor = event.data.fd
                if descriptor == wakeup {
                    running = false
                } else if descriptor == listenDescriptor {
                    acceptBacklog = true
                } else if pending[descriptor] != nil {
                    let peerClosed = event.events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
                    readHead(descriptor, peerClosed: peerClosed)
                } else if lingering[descriptor] != nil {
                    drain(descriptor)
                }
            }
            if running && acceptBacklog {
                acceptConnections()
            }
            let now = monotonicNanoseconds()
            expire(now: now)
            table.enforceDeadlines(now: now)
        }
        closeEverything()
        stopped.signal()
    }

    /// Until the nearest deadline, at most one watchdog tick; at once when the backlog is not known to be empty.
    private func waitMilliseconds() -> Int32 {
        if acceptBacklog {
            return 10
        }
        let now = monotonicNanoseconds()
        var nearest = now + Int64(Self.tickMilliseconds) * 1_000_000
        for connection in pending.values {
            nearest = min(nearest, deadline(of: connection))
        }
        for deadline in lingering.values {
            nearest = min(nearest, deadline)
        }
        return Int32(clamping: max(0, (nearest - now + 999_999) / 1_000_000))
    }

    private func deadline(of connection: Pending) -> Int64 {
        min(connection.accepted + headerTimeout, connection.lastActivity + idleTimeout)
    }

    private func acceptConnections() {
        for _ in 0..<Self.acceptsPerRound {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &address) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CReceiptSockets_acceptNonBlocking(listenDescriptor, $0, &length)
                }
            }
            guard descriptor >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EAGAIN: acceptBacklog = false
                default: break  // EMFILE and the like: try again shortly, when a descriptor may be free.
                }
                return
            }
            admit(descriptor, address: address)
        }
    }

    private func admit(_ descriptor: Int32, address: sockaddr_storage) {
        guard let client = ClientKey(address) else {
            close(descriptor)
            return
        }
        switch table.admit(client) {
        case .serverFull:
            refuse(descriptor, RequestRejection(503, "server_busy", "the server is at its connection limit"))
        case .clientFull:
            refuse(
                descriptor,
                RequestRejection(503, "too_many_connections", "this client is at its limit of open connections"))
        case .admitted:
            let now = monotonicNanoseconds()
            pending[descriptor] = Pending(client: client, address: address, accepted: now, lastActivity: now)
            // Most clients send their head with the connection: often it is all there already, and the connection
            // is handed on without ever being watched.
            readHead(descriptor, peerClosed: false)
            guard var connection = pending[descriptor] else { return }
            guard
                Self.register(descriptor, in: epoll, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
            else {
                forget(descriptor, connection)
                close(descriptor)
                return
            }
            connection.watched = true
            pending[descriptor] = connection
        }
    }

    /// Looks at what the client has sent so far; hands the connection on once its head is complete and valid,
    /// answers it when the head breaks a rule, and closes it when the client has gone. `peerClosed`: the client
    /// has shut down its side, so a head not complete now never will be (peeking still shows the bytes it sent,
    /// never the end of the stream, while they are unread).
    private func readHead(_ descriptor: Int32, peerClosed: Bool) {
        guard var connection = pending[descriptor] else { return }
        let received = peekBuffer.withUnsafeMutableBytes {
            recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK))
        }
        guard received > 0 else {
            if received == 0 || (errno != EAGAIN && errno != EINTR) {
                forget(descriptor, connection)
                close(descriptor)
            }
            return
        }
        let grew = received > connection.seen
        // A head can only end, or break a rule that has not been checked yet, with a new line.
        let newLine = grew && peekBuffer[connection.seen..<received].contains(UInt8(ascii: "\n"))
        if grew {
            connection.seen = received
            connection.lastActivity = monotonicNanoseconds()
            pending[descriptor] = connection
        }
        guard newLine || received > RequestRules.maximumHeadBytes || peerClosed else { return }
        switch RequestHead.read(Array(peekBuffer[..<received]), maximumBodyBytes: maximumBodyBytes) {
        case .incomplete:
            if peerClosed {
                forget(descriptor, connection)
                close(descriptor)
            }
        case .rejected(let rejection):
            forget(descriptor, connection)
            refuse(descriptor, rejection)
        case .complete:
            pending[descriptor] = nil
            unregister(descriptor, connection)
            let record = table.handOff(
                descriptor: descriptor, client: connection.client, address: connection.address,
                deadline: connection.accepted + headerTimeout)
            if !handOff(record) {
                table.abandon(record)
            }
        }
    }

    /// Closes pending connections past their deadline: with 408 when they had begun a head, silently when they
    /// never sent anything. Closes lingering connections whose time is up.
    private func expire(now: Int64) {
        for (descriptor, connection) in pending where deadline(of: connection) <= now {
            forget(descriptor, connection)
            if connection.seen > 0 {
                refuse(
                    descriptor,
                    RequestRejection(408, "request_timeout", "the request head did not arrive in time"))
            } else {
                close(descriptor)
            }
        }
        for (descriptor, deadline) in lingering where deadline <= now {
            lingering[descriptor] = nil
            close(descriptor)
        }
    }

    private func forget(_ descriptor: Int32, _ connection: Pending) {
        pending[descriptor] = nil
        unregister(descriptor, connection)
        table.release(connection.client)
    }

    /// Sends `rejection` on a socket no daemon holds, then closes it lingering.
    private func refuse(_ descriptor: Int32, _ rejection: RequestRejection) {
        let bytes = rejection.wireBytes
        let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if lingering.count >= maximumLingering, let oldest = lingering.min(by: { $0.value < $1.value })?.key {
            // Make room by the connection refused longest ago, most likely one that never reads its answer.
            lingering[oldest] = nil
            close(oldest)
        }
        guard sent == bytes.count, shutdown(descriptor, Int32(SHUT_WR)) == 0,
            Self.register(descriptor, in: epoll, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        else {
            close(descriptor)
            return
        }
        lingering[descriptor] = monotonicNanoseconds() + Self.lingerNanoseconds
    }

    /// Reads and drops what a refused client still sends; closes at its end of stream.
    private func drain(_ descriptor: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let received = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received > 0 {
                continue
            }
            if received < 0 && (errno == EAGAIN || errno == EINTR) {
                return
            }
            break
        }
        // End of stream, an error, or a client still sending a lot: stop lingering.
        lingering[descriptor] = nil
        close(descriptor)
    }

    private func closeEverything() {
        close(listenDescriptor)
        for (descriptor, connection) in pending {
            table.release(connection.client)
            close(descriptor)
        }
        pending = [:]
        for descriptor in lingering.keys {
            close(descriptor)
        }
        lingering = [:]
        close(wakeup)
        close(epoll)
    }

    /// Takes a pending connection's socket out of the epoll set, when it is in it.
    private func unregister(_ descriptor: Int32, _ connection: Pending) {
        if connection.watched {
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
        }
    }

    private static func register(_ descriptor: Int32, in epoll: Int32, events: UInt32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.fd = descriptor
        return epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0
    }
}
