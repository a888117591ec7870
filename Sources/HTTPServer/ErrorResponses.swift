private import Glibc

// The JSON error answers the server gives on its own, in the shape `{"error":{"code":…,"message":…}}`.

/// 413 for a request body over `limit` bytes.
func bodyTooLarge(limit: Int) -> RequestRejection {
    RequestRejection(413, "body_too_large", "the request body exceeds the limit of \(limit) bytes")
}

/// 500 for a failure in the server's own glue, never caused by the request.
func internalError(_ message: String) -> HTTPResponse {
    jsonError(status: 500, code: "internal_error", message: message)
}

extension RequestRejection {
    /// The answer through libmicrohttpd, closing the connection after it.
    var response: HTTPResponse {
        var response = jsonError(status: status, code: code, message: message)
        response.headers.append((name: "Connection", value: "close"))
        return response
    }

    /// The whole answer as bytes for a socket libmicrohttpd never saw: status line, `Date`, `Content-Type`,
    /// `Content-Length`, `Connection: close` and the JSON body.
    var wireBytes: [UInt8] {
        let body = response.body
        let head =
            "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\nDate: \(httpDate())\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }
}

/// `message` must not need JSON escaping; callers pass fixed sentences.
private func jsonError(status: Int, code: String, message: String) -> HTTPResponse {
    HTTPResponse(
        status: status,
        headers: [(name: "Content-Type", value: "application/json")],
        body: Array(#"{"error":{"code":"\#(code)","message":"\#(message)"}}"#.utf8)
    )
}

/// The current time as an HTTP date (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
private func httpDate() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let day = days[Int(parts.tm_wday) % 7]
    let month = months[Int(parts.tm_mon) % 12]
    return "\(day), \(twoDigits(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
        + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
}
