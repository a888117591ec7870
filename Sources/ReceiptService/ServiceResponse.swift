import HTTPServer
import StrictJSON

/// A request the service refuses: the HTTP status, a stable snake_case code and a message naming the field and
/// the rule. Sent as `{"error": {"code", "message"}}`, with `fields` for conflicts; on Apple's server API paths as
/// Apple's `{"errorCode", "errorMessage"}` (``appleErrorCode``).
struct ServiceError: Error, Sendable {
    let status: Int
    let code: String
    let message: String
    var fields: [String] = []
    var headers: [(name: String, value: String)] = []
    /// Apple's numeric `errorCode` (`4040010`…): the answer is then Apple's error body.
    var appleErrorCode: Int? = nil

    /// An error of Apple's server API: `status`, Apple's `errorCode` and `errorMessage` (Apple's sentence, then what
    /// exactly was wrong).
    static func apple(_ status: Int, _ errorCode: Int, _ message: String) -> ServiceError {
        ServiceError(status: status, code: String(errorCode), message: message, appleErrorCode: errorCode)
    }

    static func badRequest(_ message: String) -> ServiceError {
        ServiceError(status: 400, code: "invalid_request", message: message)
    }

    static func invalidBody(_ error: JSONFieldError) -> ServiceError {
        badRequest(error.path.isEmpty ? "request body \(error.rule)" : "\(error.path): \(error.rule)")
    }

    /// This error as Apple's server API answers it: itself when it has an ``appleErrorCode``, else Apple's general
    /// code for its status (4000000 bad request, 5000001 retryable, 5000000 otherwise) with the message.
    var inAppleShape: ServiceError {
        guard appleErrorCode == nil else { return self }
        var error: ServiceError
        switch status {
        case 503: error = .apple(status, 5_000_001, "A retryable error occurred: \(message)")
        case 500...: error = .apple(status, 5_000_000, "An unknown error occurred: \(message)")
        default: error = .apple(status, 4_000_000, "Bad request: \(message)")
        }
        error.headers = headers
        return error
    }

    var response: HTTPResponse {
        if let appleErrorCode {
            var response = HTTPResponse.json(
                status: status,
                JSONObject(["errorCode": .integer(appleErrorCode), "errorMessage": .string(message)]))
            response.headers += headers
            return response
        }
        var error = JSONObject(["code": .string(code), "message": .string(message)])
        if !fields.isEmpty { error["fields"] = .array(fields.map(JSONValue.string)) }
        var response = HTTPResponse.json(status: status, JSONObject(["error": .object(error)]))
        response.headers += headers
        return response
    }
}

extension HTTPResponse {
    /// `object` serialised, with a JSON content type.
    static func json(status: Int = 200, _ object: JSONObject) -> HTTPResponse {
        json(status: status) { writer in
            for member in object.members { writer.add(member.key, member.value) }
        }
    }

    /// Room for a body before it has to grow: Apple's whole answer to a receipt of a few purchases (6.4 KB for
    /// three, one of them a subscription) is written without copying it as it grows.
    private static let jsonBodyCapacity = 8192

    /// The object whose members `build` adds, written as they are added (no tree in between), with a JSON
    /// content type: the same body as ``json(status:_:)`` for the same members.
    static func json(status: Int = 200, writing build: (inout JSONObjectWriter) -> Void) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(jsonBodyCapacity)
        JSONObjectWriter.write(to: &body, build)
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }
}

extension HTTPRequest {
    /// The body as one JSON document.
    func jsonBody() throws(ServiceError) -> JSONValue {
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw .badRequest("request body is not valid JSON: \(error)")
        }
    }
}
