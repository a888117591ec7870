// The JSON error answers the server gives on its own, in the shape `{"error":{"code":…,"message":…}}`.

/// 413 for a request body over `limit` bytes.
func bodyTooLarge(limit: Int) -> HTTPResponse {
    jsonError(status: 413, code: "body_too_large", message: "the request body exceeds the limit of \(limit) bytes")
}

/// 500 for a failure in the server's own glue, never caused by the request.
func internalError(_ message: String) -> HTTPResponse {
    jsonError(status: 500, code: "internal_error", message: message)
}

/// `message` must not need JSON escaping; callers pass fixed sentences.
private func jsonError(status: Int, code: String, message: String) -> HTTPResponse {
    HTTPResponse(
        status: status,
        headers: [(name: "Content-Type", value: "application/json")],
        body: Array(#"{"error":{"code":"\#(code)","message":"\#(message)"}}"#.utf8)
    )
}
