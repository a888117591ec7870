import Dispatch
import Foundation
import Glibc
import Synchronization

/// What a ``LoopbackServer`` does with the connection it accepts, once it has read the request.
enum ServerBehaviour: Sendable {
    /// Sends these bytes, then closes.
    case respond(String)
    /// Closes without sending anything.
    case closeWithoutAnswer
    /// Closes at once, before reading the request (the kernel answers the unread bytes with a reset).
    case closeUnread
    /// Sends nothing and keeps the connection until the client closes it (at most ten seconds).
    case neverAnswer
    /// Sends the start of a response a byte every 20 ms, without end, until the client closes (at most ten seconds).
    case drip
}

/// A TCP server on a loopback address, in a thread of its own, for exactly one connection: it reads one request
/// (head and Content-Length body), keeps its bytes, acts out a ``ServerBehaviour`` and closes everything. Every
/// wait is bounded (ten seconds), so a test that never connects still lets the thread end.
final class LoopbackServer: Sendable {
    /// The port bound (the kernel's pick).
    let port: UInt16
    private let listener: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let received = Mutex<[UInt8]>([])

    /// Whether `::1` can be bound on this machine.
    static let isIPv6Available: Bool = {
        guard let bound = bindLoopback(ipv6: true) else {
            return false
        }
        close(bound.descriptor)
        return true
    }()

    /// Listens on `127.0.0.1` (or `::1` when `ipv6`) and starts the thread.
    init(_ behaviour: ServerBehaviour, ipv6: Bool = false) throws(LoopbackSetupFailed) {
        guard let bound = bindLoopback(ipv6: ipv6) else {
            throw LoopbackSetupFailed(errno: errno)
        }
        guard listen(bound.descriptor, 4) == 0 else {
            let code = errno
            close(bound.descriptor)
            throw LoopbackSetupFailed(errno: code)
        }
        listener = bound.descriptor
        port = bound.port
        Thread { [self] in
            serve(behaviour)
            finished.signal()
        }.start()
    }

    /// The request's bytes as received, once the server has closed the connection (waiting at most ten seconds).
    func request() -> String? {
        guard finished.wait(timeout: .now() + 10) == .success else {
            return nil
        }
        return String(decoding: received.withLock { $0 }, as: UTF8.self)
    }

    private func serve(_ behaviour: ServerBehaviour) {
        defer { close(listener) }
        var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, 10_000) == 1 else {
            return
        }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else {
            return
        }
        defer { close(connection) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if case .closeUnread = behaviour {
            return
        }
        received.withLock { $0 = readRequest(connection) }
        switch behaviour {
        case .respond(let text):
            _ = Self.send(Array(text.utf8), on: connection)
        case .closeWithoutAnswer, .closeUnread:
            break
        case .neverAnswer:
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}
        case .drip:
            let start = Array("HTTP/1.1 200 OK\r\nX-Drip: ".utf8)
            guard Self.send(start, on: connection) else {
                return
            }
            for _ in 0..<500 {
                guard Self.send([UInt8(ascii: "a")], on: connection) else {
                    return
                }
                usleep(20_000)
            }
        }
    }

    /// The head and as many body bytes as its Content-Length says (at most 1 MiB), or what came before EOF.
    private func readRequest(_ connection: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if bytes.count - end.upperBound >= length {
                    break
                }
            }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                break
            }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// Whether all of `bytes` went out.
    private static func send(_ bytes: [UInt8], on connection: Int32) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }
}

/// A port with nothing listening: a socket bound to `127.0.0.1` and never put in listening mode, which holds the
/// port (so no other test takes it) while connections to it are refused.
final class UnusedPort {
    let port: UInt16
    private let descriptor: Int32

    init() throws(LoopbackSetupFailed) {
        guard let bound = bindLoopback(ipv6: false) else {
            throw LoopbackSetupFailed(errno: errno)
        }
        descriptor = bound.descriptor
        port = bound.port
    }

    deinit {
        close(descriptor)
    }
}

/// A loopback socket could not be created, bound or put in listening mode.
struct LoopbackSetupFailed: Error {
    let errno: Int32
}

/// A TCP socket bound to `127.0.0.1` or `::1` on a port the kernel picks, with that port; nil when that fails.
private func bindLoopback(ipv6: Bool) -> (descriptor: Int32, port: UInt16)? {
    let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
        return nil
    }
    var addressV6 = sockaddr_in6()
    addressV6.sin6_family = sa_family_t(AF_INET6)
    addressV6.sin6_addr = in6addr_loopback
    var addressV4 = sockaddr_in()
    addressV4.sin_family = sa_family_t(AF_INET)
    addressV4.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    guard ipv6 ? bindAndName(descriptor, &addressV6) : bindAndName(descriptor, &addressV4) else {
        close(descriptor)
        return nil
    }
    return (descriptor, UInt16(bigEndian: ipv6 ? addressV6.sin6_port : addressV4.sin_port))
}

/// Binds `descriptor` to `address`, then reads the address really bound back into it.
private func bindAndName<Address>(_ descriptor: Int32, _ address: inout Address) -> Bool {
    withUnsafeMutableBytes(of: &address) { bytes in
        guard let pointer = bytes.baseAddress?.assumingMemoryBound(to: sockaddr.self) else {
            return false
        }
        var length = socklen_t(bytes.count)
        return bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
    }
}
