import HTTPServer
import ReceiptJWS
import ReceiptLedger
import ReceiptModel

/// What Apple's server API paths share: their bearer JWT (``APITokenVerifier``), the app it names, and ledger
/// failures in Apple's error vocabulary.
extension ReceiptService {
    /// The route parameter under which an accepted API token's `bid` reaches the handler (no path template can
    /// name it: templates name parameters in braces).
    static let tokenBundleParameter = "@bid"

    /// The `bid` of the request's `Authorization: Bearer JWT` when ``APITokenVerifier`` accepts it at the service's
    /// clock; 401 with Apple's error body and the reason otherwise.
    func authenticateStoreAPI(_ request: HTTPRequest) throws(ServiceError) -> String {
        guard let verifier = apiTokens else { throw Self.storeAPINotConfigured }
        guard let token = Self.bearerToken(request) else {
            throw Self.unauthenticated("this endpoint requires Authorization: Bearer JWT")
        }
        do {
            return try verifier.verify(token, at: clock()).bundleID
        } catch {
            throw Self.unauthenticated("\(error.code.rawValue): \(error.message)")
        }
    }

    /// Apple documents no `errorCode` for a refused token; 4010000 is the one clients of the API use for it.
    static func unauthenticated(_ reason: String) -> ServiceError {
        var error = ServiceError.apple(401, 4_010_000, "Unauthenticated: \(reason)")
        error.headers = [("WWW-Authenticate", "Bearer")]
        return error
    }

    /// A path parameter of Apple's server API that is not an identifier, with Apple's code for it.
    static func invalidStoreAPIParameter(_ name: String, _ reason: String) -> ServiceError {
        name == "testNotificationToken"
            ? .apple(400, 4_000_020, "Invalid test notification token: \(reason)")
            : .apple(400, 4_000_006, "Invalid transaction id: \(reason)")
    }

    static let storeAPINotConfigured = ServiceError.apple(
        404, 4_040_003, "App not found: this service has no store_api configured")

    /// The signed data of the app the token named, dated now.
    func storeAPISignedData(bundleID: String) throws(ServiceError) -> StoreAPISignedData {
        guard let api = configuration.storeAPI else { throw Self.storeAPINotConfigured }
        guard let app = api.app(bundleID) else { throw .apple(404, 4_040_003, "App not found: \(bundleID)") }
        return StoreAPISignedData(api: api, app: app, environment: configuration.environment, signedDate: clock())
    }

    /// Runs a ledger read for Apple's server API: a storage failure is Apple's retryable general error (500
    /// 5000001), anything else its general error.
    func storeAPILedger<T>(_ operation: () throws(LedgerError) -> T) throws(ServiceError) -> T {
        do {
            return try operation()
        } catch {
            switch error.code {
            case .storage:
                throw .apple(503, 5_000_001, "A retryable error occurred: \(error.publicDetail)")
            case .conflict, .notFound:
                throw .apple(500, 5_000_000, "An unknown error occurred: \(error.publicDetail)")
            }
        }
    }

    /// The stored transaction `transactionID` of the app `bundleID`; Apple's 4040010 when there is none.
    func storeAPITransaction(_ transactionID: String, bundleID: String) throws(ServiceError) -> LedgerTransaction {
        let stored = try storeAPILedger { () throws(LedgerError) in try ledger.transaction(id: transactionID) }
        guard let stored, stored.bundleID == bundleID else {
            throw .apple(404, 4_040_010, "Transaction id not found: \(transactionID)")
        }
        return stored
    }
}
