private import Glibc

/// A bound, listening, non-blocking TCP socket (IPv4 or IPv6), created here (rather than by libmicrohttpd) so that
/// resolution and bind failures carry the system's error text and the bound port can be read back with
/// `getsockname`.
struct ListenSocket {
    /// The socket's file descriptor; whoever holds this value must close it or hand it on.
    let descriptor: Int32
    /// The port really bound (the kernel's pick when 0 was asked for).
    let port: UInt16

    /// Resolves `address` (a literal or a host name; the first address the resolver returns), then creates,
    /// binds and listens. Throws ``HTTPServerError/Code/bindFailed`` with the system's reason when any step fails.
    static func open(_ address: ListenAddress) throws(HTTPServerError) -> ListenSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &results)
        defer { if let results { freeaddrinfo(results) } }
        guard status == 0, let first = results, let socketAddress = first.pointee.ai_addr else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw HTTPServerError(.bindFailed, "cannot resolve the host \"\(address.host)\": \(reason)")
        }
        let descriptor = socket(
            first.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPServerError(.bindFailed, "cannot create a socket for \(address): \(systemError())")
        }
        var reuse: Int32 = 1
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let listening =
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size)) == 0
            && bind(descriptor, socketAddress, first.pointee.ai_addrlen) == 0
            && listen(descriptor, SOMAXCONN) == 0
            && withUnsafeMutableBytes(of: &bound) { bytes in
                guard let pointer = bytes.baseAddress?.assumingMemoryBound(to: sockaddr.self) else { return false }
                return getsockname(descriptor, pointer, &boundLength) == 0
            }
        guard listening else {
            let reason = systemError()
            close(descriptor)
            throw HTTPServerError(.bindFailed, "cannot listen on \(address): \(reason)")
        }
        return ListenSocket(descriptor: descriptor, port: Self.port(of: bound))
    }

    /// The port of an IPv4 or IPv6 socket address.
    private static func port(of storage: sockaddr_storage) -> UInt16 {
        let isIPv6 = storage.ss_family == sa_family_t(AF_INET6)
        return withUnsafeBytes(of: storage) { bytes in
            isIPv6
                ? UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
        }
    }

    private static func systemError() -> String {
        let code = errno
        return "\(String(cString: strerror(code))) (errno \(code))"
    }
}
