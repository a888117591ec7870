private import Glibc

/// A bound, listening, non-blocking IPv4 TCP socket, created here (rather than by libmicrohttpd) so that bind
/// failures carry the system's error text and the bound port can be read back with `getsockname`.
struct ListenSocket {
    /// The socket's file descriptor; whoever holds this value must close it or hand it on.
    let descriptor: Int32
    /// The port really bound (the kernel's pick when 0 was asked for).
    let port: UInt16

    /// Creates, binds and listens, or throws ``HTTPServerError/Code/invalidConfiguration`` for a host that is not
    /// an IPv4 literal and ``HTTPServerError/Code/bindFailed`` with the system's reason for anything else.
    static func open(host: String, port: UInt16) throws(HTTPServerError) -> ListenSocket {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError(.invalidConfiguration, "host \"\(host)\" is not an IPv4 address literal")
        }
        let endpoint = "\(host):\(port)"
        let descriptor = socket(
            AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPServerError(.bindFailed, "cannot create a socket for \(endpoint): \(systemError())")
        }
        var reuse: Int32 = 1
        let bound = withUnsafeMutableBytes(of: &address) { addressBytes -> Bool in
            guard let socketAddress = addressBytes.baseAddress?.assumingMemoryBound(to: sockaddr.self) else {
                return false
            }
            let addressLength = socklen_t(addressBytes.count)
            var actualLength = addressLength
            return setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size)) == 0
                && bind(descriptor, socketAddress, addressLength) == 0
                && listen(descriptor, SOMAXCONN) == 0
                && getsockname(descriptor, socketAddress, &actualLength) == 0
        }
        guard bound else {
            let reason = systemError()
            close(descriptor)
            throw HTTPServerError(.bindFailed, "cannot listen on \(endpoint): \(reason)")
        }
        return ListenSocket(descriptor: descriptor, port: UInt16(bigEndian: address.sin_port))
    }

    private static func systemError() -> String {
        let code = errno
        return "\(String(cString: strerror(code))) (errno \(code))"
    }
}
