internal import Glibc
internal import Synchronization

/// A client as the per-client connection limit counts it: an IPv4 address, or the first 64 bits of an IPv6
/// address (the prefix one host is usually given, so that it cannot take a fresh address per connection); an
/// IPv4-mapped IPv6 address counts as the IPv4 address.
struct ClientKey: Hashable, Sendable {
    private let family: UInt8
    private let bits: UInt64

    /// The key of the peer in `storage` (what `accept` returned); nil for a family other than IPv4 or IPv6.
    init?(_ storage: sockaddr_storage) {
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            family = 4
            bits = UInt64(UInt32(bigEndian: address.sin_addr.s_addr))
        case AF_INET6:
            let address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            family = mapped ? 4 : 6
            bits = (mapped ? bytes[12..<16] : bytes[0..<8]).reduce(0) { $0 << 8 | UInt64($1) }
        default:
            return nil
        }
    }
}

/// One connection handed to libmicrohttpd. Its one owner is the daemon serving it (through the connection's
/// socket context, from the "started" notification to the "closed" one); ``ConnectionTable`` keeps a reference
/// while it is counted.
///
/// `@unchecked Sendable`: `deadline` is atomic; `target`, `targetLength`, `handle`, `headPending` and `spareDescriptor` are only
/// touched by the daemon thread serving the connection.
final class ServedConnection: @unchecked Sendable {
    let descriptor: Int32
    let client: ClientKey
    /// The peer, as `accept` returned it.
    let address: sockaddr_storage
    /// Which daemon serves it.
    let daemonIndex: Int
    /// When the watchdog shuts the connection down (``monotonicNanoseconds()``), or 0 for no deadline: the end of
    /// the time allowed for the current request's head, or for its body.
    let deadline: Atomic<Int64>
    /// The current request's target exactly as libmicrohttpd first saw it (path and query), and its length then:
    /// libmicrohttpd stops a target at a NUL byte, so a target shorter than the space it takes hid something.
    var target: [UInt8] = []
    var targetLength = 0
    /// libmicrohttpd's connection, from its "started" notification on.
    var handle: OpaquePointer?
    /// Whether libmicrohttpd has begun a request (read its request line) that the application has not seen and
    /// that has not ended: it is reading that request's head, or refusing it.
    var headPending = false
    /// The far end of the socket pair put under the descriptor in place of the client's socket
    /// (``MicroHTTPDErrorAnswers``), closed once libmicrohttpd closes the connection; -1 when there is none.
    var spareDescriptor: Int32 = -1

    init(descriptor: Int32, client: ClientKey, address: sockaddr_storage, daemonIndex: Int, deadline: Int64) {
        self.descriptor = descriptor
        self.client = client
        self.address = address
        self.daemonIndex = daemonIndex
        self.deadline = Atomic(deadline)
    }
}

/// Every connection the server holds, counted against ``HTTPServerConfiguration/maximumConnections`` and
/// ``HTTPServerConfiguration/maximumConnectionsPerClient``: those the gate is still reading a first head from, and
/// those libmicrohttpd serves. Shared by the gate's thread and the daemons' threads.
final class ConnectionTable: Sendable {
    /// Whether a new connection may stay.
    enum Admission: Equatable {
        case admitted
        /// The server holds ``HTTPServerConfiguration/maximumConnections`` connections.
        case serverFull
        /// This client holds ``HTTPServerConfiguration/maximumConnectionsPerClient`` connections.
        case clientFull
    }

    private struct State {
        var total = 0
        var perClient: [ClientKey: Int] = [:]
        var perDaemon: [Int]
        /// Handed to a daemon and counted, by identity.
        var live: [ObjectIdentifier: ServedConnection] = [:]
        /// Handed to a daemon whose "started" notification has not come yet, by descriptor.
        var unclaimed: [Int32: ServedConnection] = [:]
        /// Started: the daemon owns the descriptor until its "closed" notification, so the watchdog and a stop
        /// may shut it down.
        var claimed: [ObjectIdentifier: ServedConnection] = [:]
    }

    private let maximumConnections: Int
    private let maximumPerClient: Int
    private let state: Mutex<State>

    init(maximumConnections: Int, maximumPerClient: Int, daemons: Int) {
        self.maximumConnections = maximumConnections
        self.maximumPerClient = maximumPerClient
        state = Mutex(State(perDaemon: Array(repeating: 0, count: daemons)))
    }

    /// Counts a new connection from `client` when there is room for it.
    func admit(_ client: ClientKey) -> Admission {
        state.withLock { state in
            guard state.total < maximumConnections else { return .serverFull }
            guard state.perClient[client, default: 0] < maximumPerClient else { return .clientFull }
            state.total += 1
            state.perClient[client, default: 0] += 1
            return .admitted
        }
    }

    /// Uncounts an admitted connection closed before it was handed to a daemon.
    func release(_ client: ClientKey) {
        state.withLock { Self.uncount(client, in: &$0) }
    }

    /// Moves an admitted connection to the least loaded daemon; the record returned is counted until
    /// ``abandon(_:)`` or ``closed(_:)``.
    func handOff(descriptor: Int32, client: ClientKey, address: sockaddr_storage, deadline: Int64)
        -> ServedConnection
    {
        state.withLock { state in
            // A record still unclaimed under this descriptor is one libmicrohttpd closed without ever starting it
            // (the descriptor was free to be reused): it is no longer held.
            if let stale = state.unclaimed.removeValue(forKey: descriptor) {
                Self.remove(stale, from: &state)
            }
            let daemon = state.perDaemon.indices.min { state.perDaemon[$0] < state.perDaemon[$1] } ?? 0
            let record = ServedConnection(
                descriptor: descriptor, client: client, address: address, daemonIndex: daemon, deadline: deadline)
            state.perDaemon[daemon] += 1
            state.live[ObjectIdentifier(record)] = record
            state.unclaimed[descriptor] = record
            return record
        }
    }

    /// The record handed off under `descriptor`, now that its daemon has started serving it.
    func claim(descriptor: Int32) -> ServedConnection? {
        state.withLock { state in
            guard let record = state.unclaimed.removeValue(forKey: descriptor) else { return nil }
            state.claimed[ObjectIdentifier(record)] = record
            return record
        }
    }

    /// Uncounts a record whose daemon refused it (and closed its descriptor), unless its "closed" notification
    /// already did.
    func abandon(_ record: ServedConnection) {
        state.withLock { state in
            if state.unclaimed[record.descriptor] === record {
                state.unclaimed[record.descriptor] = nil
            }
            Self.remove(record, from: &state)
        }
    }

    /// Uncounts a record at its daemon's "closed" notification, before the daemon closes its descriptor.
    func closed(_ record: ServedConnection) {
        state.withLock { Self.remove(record, from: &$0) }
    }

    /// Shuts down (both directions) every started connection whose deadline has passed; libmicrohttpd then sees
    /// the connection end and closes it. Safe from the descriptor being reused: a descriptor is closed only after
    /// its "closed" notification, which takes the same lock.
    func enforceDeadlines(now: Int64) {
        state.withLock { state in
            for record in state.claimed.values {
                let deadline = record.deadline.load(ordering: .relaxed)
                if deadline != 0 && deadline <= now {
                    record.deadline.store(0, ordering: .relaxed)
                    shutdown(record.descriptor, Int32(SHUT_RDWR))
                }
            }
        }
    }

    /// Shuts down every started connection, again each millisecond for those started since, and returns once the
    /// daemons hold none (each closed after its daemon saw it end) or `nanoseconds` have passed. For a stop, once no
    /// new connection can come: libmicrohttpd 0.9.75 must not be stopped while it is refusing a request, which it
    /// may be doing on any connection it holds (see ``RunningServer/stop(gracePeriodSeconds:)``).
    func closeAllStarted(waitingAtMost nanoseconds: Int64) {
        let end = monotonicNanoseconds() + nanoseconds
        while true {
            let empty = state.withLock { state in
                for record in state.claimed.values {
                    shutdown(record.descriptor, Int32(SHUT_RDWR))
                }
                return state.claimed.isEmpty && state.unclaimed.isEmpty
            }
            if empty || monotonicNanoseconds() >= end { return }
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
    }

    /// The started connections daemon `index` serves, in no particular order.
    func started(byDaemon index: Int) -> [ServedConnection] {
        state.withLock { state in state.claimed.values.filter { $0.daemonIndex == index } }
    }

    /// How many connections are counted (for tests and diagnostics).
    var count: Int { state.withLock { $0.total } }

    private static func remove(_ record: ServedConnection, from state: inout State) {
        let identifier = ObjectIdentifier(record)
        guard state.live.removeValue(forKey: identifier) != nil else { return }
        state.claimed[identifier] = nil
        state.perDaemon[record.daemonIndex] -= 1
        uncount(record.client, in: &state)
    }

    private static func uncount(_ client: ClientKey, in state: inout State) {
        state.total -= 1
        let remaining = state.perClient[client, default: 1] - 1
        state.perClient[client] = remaining > 0 ? remaining : nil
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
