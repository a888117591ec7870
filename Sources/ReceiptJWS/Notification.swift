import ReceiptModel
import StrictJSON

/// An App Store Server Notification V2 that passed every check: the outer signed payload and every signed JWS
/// nested in it, each verified with the same anchors.
public struct VerifiedNotification: Sendable {
    /// The outer `signedPayload` (`responseBodyV2DecodedPayload`).
    public let signedPayload: VerifiedJWS
    /// `notificationType`: `SUBSCRIBED`, `DID_RENEW`, `REFUND`, `TEST`…
    public let notificationType: String?
    /// `subtype`: `INITIAL_BUY`, `AUTO_RENEW_DISABLED`…
    public let subtype: String?
    /// `notificationUUID`.
    public let notificationUUID: String?
    /// `version`: `2.0`.
    public let version: String?
    /// `signedDate`.
    public let signedDate: ReceiptDate?
    /// `data`: the app metadata and the signed transaction and renewal info.
    public let data: NotificationData?
    /// `summary`: the outcome of a subscription-renewal-date extension request.
    public let summary: NotificationSummary?
    /// `externalPurchaseToken`: for `EXTERNAL_PURCHASE_TOKEN` notifications.
    public let externalPurchaseToken: ExternalPurchaseToken?
    /// `data.signedTransactionInfo`, verified.
    public let signedTransactionInfo: VerifiedJWS?
    /// `data.signedTransactionInfo`'s payload.
    public let transaction: SignedTransaction?
    /// `data.signedRenewalInfo`, verified.
    public let signedRenewalInfo: VerifiedJWS?
    /// `data.signedRenewalInfo`'s payload.
    public let renewalInfo: SignedRenewalInfo?
    /// The members of the outer payload this type does not type, in payload order.
    public let unknownFields: JSONObject

    static let knownKeys: Set<String> = [
        "notificationType", "subtype", "notificationUUID", "data", "version", "signedDate", "summary",
        "externalPurchaseToken",
    ]
}

/// The `data` object of a notification.
public struct NotificationData: Hashable, Sendable {
    /// `appAppleId` (absent outside production).
    public var appAppleID: Int64?
    /// `bundleId`.
    public var bundleID: String?
    /// `bundleVersion`.
    public var bundleVersion: String?
    /// `environment`.
    public var environment: String?
    /// `signedTransactionInfo`: a JWS, verified into ``VerifiedNotification/transaction``.
    public var signedTransactionInfo: String?
    /// `signedRenewalInfo`: a JWS, verified into ``VerifiedNotification/renewalInfo``.
    public var signedRenewalInfo: String?
    /// `status`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int64?
    /// `consumptionRequestReason`.
    public var consumptionRequestReason: String?
    /// The whole object, in payload order.
    public var json: JSONObject
    /// The members this type does not type.
    public var unknownFields: JSONObject

    public static let knownKeys: Set<String> = [
        "appAppleId", "bundleId", "bundleVersion", "environment", "signedTransactionInfo", "signedRenewalInfo",
        "status", "consumptionRequestReason",
    ]

    public init(json: JSONObject, path: String = "payload.data") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        appAppleID = try fields.integer("appAppleId")
        bundleID = try fields.string("bundleId")
        bundleVersion = try fields.string("bundleVersion")
        environment = try fields.string("environment")
        signedTransactionInfo = try fields.string("signedTransactionInfo")
        signedRenewalInfo = try fields.string("signedRenewalInfo")
        status = try fields.integer("status")
        consumptionRequestReason = try fields.string("consumptionRequestReason")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }
}

/// The `summary` object of a `RENEWAL_EXTENSION` notification.
public struct NotificationSummary: Hashable, Sendable {
    /// `environment`.
    public var environment: String?
    /// `appAppleId`.
    public var appAppleID: Int64?
    /// `bundleId`.
    public var bundleID: String?
    /// `productId`.
    public var productID: String?
    /// `requestIdentifier`.
    public var requestIdentifier: String?
    /// `storefrontCountryCodes`.
    public var storefrontCountryCodes: [String]?
    /// `succeededCount`.
    public var succeededCount: Int64?
    /// `failedCount`.
    public var failedCount: Int64?
    /// The whole object, in payload order.
    public var json: JSONObject
    /// The members this type does not type.
    public var unknownFields: JSONObject

    public static let knownKeys: Set<String> = [
        "environment", "appAppleId", "bundleId", "productId", "requestIdentifier", "storefrontCountryCodes",
        "succeededCount", "failedCount",
    ]

    public init(json: JSONObject, path: String = "payload.summary") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        environment = try fields.string("environment")
        appAppleID = try fields.integer("appAppleId")
        bundleID = try fields.string("bundleId")
        productID = try fields.string("productId")
        requestIdentifier = try fields.string("requestIdentifier")
        storefrontCountryCodes = try fields.strings("storefrontCountryCodes")
        succeededCount = try fields.integer("succeededCount")
        failedCount = try fields.integer("failedCount")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }
}

/// The `externalPurchaseToken` object of an `EXTERNAL_PURCHASE_TOKEN` notification.
public struct ExternalPurchaseToken: Hashable, Sendable {
    /// `externalPurchaseId`; sandbox tokens start with `SANDBOX`.
    public var externalPurchaseID: String?
    /// `tokenCreationDate`.
    public var tokenCreationDate: ReceiptDate?
    /// `appAppleId`.
    public var appAppleID: Int64?
    /// `bundleId`.
    public var bundleID: String?
    /// `tokenType`.
    public var tokenType: String?
    /// `tokenExpirationDate`.
    public var tokenExpirationDate: ReceiptDate?
    /// The whole object, in payload order.
    public var json: JSONObject
    /// The members this type does not type.
    public var unknownFields: JSONObject

    public static let knownKeys: Set<String> = [
        "externalPurchaseId", "tokenCreationDate", "appAppleId", "bundleId", "tokenType", "tokenExpirationDate",
    ]

    public init(json: JSONObject, path: String = "payload.externalPurchaseToken") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        externalPurchaseID = try fields.string("externalPurchaseId")
        tokenCreationDate = try fields.date("tokenCreationDate")
        appAppleID = try fields.integer("appAppleId")
        bundleID = try fields.string("bundleId")
        tokenType = try fields.string("tokenType")
        tokenExpirationDate = try fields.date("tokenExpirationDate")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }

    /// The environment the token belongs to, which the token does not state: `Sandbox` when its id starts with
    /// `SANDBOX`, otherwise `Production` (as Apple documents the id).
    public var environment: AppStoreEnvironment {
        externalPurchaseID?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }
}

extension JWSVerifier {
    /// Verifies an App Store Server Notifications V2 request body, `{"signedPayload":"<JWS>"}` (other members of the
    /// body are ignored: they are not signed), then every JWS nested in its `data`, each at its own `signedDate`
    /// unless `time` is given, and applies the caller's checks to the notification and to what it nests.
    public func verifyNotification(
        _ body: [UInt8],
        expecting expectations: JWSExpectations = JWSExpectations(),
        at time: ReceiptDate? = nil
    ) throws(JWSError) -> VerifiedNotification {
        guard body.count <= maximumSize else {
            throw JWSError(.tooLarge, "the notification body is \(body.count) bytes; the limit is \(maximumSize)")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body, maximumDepth: 4)
        } catch {
            throw JWSError(.malformed, "the notification body is not JSON: \(error)")
        }
        guard case .string(let compact)? = value["signedPayload"] else {
            throw JWSError(.malformed, "the notification body has no signedPayload string")
        }
        return try verifyNotification(signedPayload: Array(compact.utf8), expecting: expectations, at: time)
    }

    /// ``verifyNotification(_:expecting:at:)`` for the `signedPayload` JWS alone.
    public func verifyNotification(
        signedPayload compact: [UInt8],
        expecting expectations: JWSExpectations = JWSExpectations(),
        at time: ReceiptDate? = nil
    ) throws(JWSError) -> VerifiedNotification {
        let outer = try verify(compact, at: time)
        let fields = PayloadFields(outer.payload, path: "payload")
        let data = try fields.object("data").map { object throws(JWSError) in try NotificationData(json: object) }
        let summary = try fields.object("summary").map { object throws(JWSError) in
            try NotificationSummary(json: object)
        }
        let token = try fields.object("externalPurchaseToken").map { object throws(JWSError) in
            try ExternalPurchaseToken(json: object)
        }
        try Self.check(expectations, data: data, summary: summary, token: token)

        var signedTransaction: VerifiedJWS?
        var transaction: SignedTransaction?
        if let nested = data?.signedTransactionInfo {
            let path = "payload.data.signedTransactionInfo"
            let verified = try nestedJWS(nested, path: path, at: time)
            signedTransaction = verified
            transaction = try Self.prefixed(path) { () throws(JWSError) in
                let typed = try SignedTransaction(json: verified.payload, path: path)
                try typed.check(expectations, path: path)
                return typed
            }
        }
        var signedRenewal: VerifiedJWS?
        var renewalInfo: SignedRenewalInfo?
        if let nested = data?.signedRenewalInfo {
            let path = "payload.data.signedRenewalInfo"
            let verified = try nestedJWS(nested, path: path, at: time)
            signedRenewal = verified
            renewalInfo = try Self.prefixed(path) { () throws(JWSError) in
                let typed = try SignedRenewalInfo(json: verified.payload, path: path)
                try typed.check(expectations, path: path)
                return typed
            }
        }
        return VerifiedNotification(
            signedPayload: outer, notificationType: try fields.string("notificationType"),
            subtype: try fields.string("subtype"), notificationUUID: try fields.string("notificationUUID"),
            version: try fields.string("version"), signedDate: try fields.date("signedDate"), data: data,
            summary: summary, externalPurchaseToken: token, signedTransactionInfo: signedTransaction,
            transaction: transaction, signedRenewalInfo: signedRenewal, renewalInfo: renewalInfo,
            unknownFields: fields.unknownMembers(known: VerifiedNotification.knownKeys))
    }

    /// A JWS nested in a notification, verified on its own; errors name where it was nested.
    private func nestedJWS(_ compact: String, path: String, at time: ReceiptDate?) throws(JWSError) -> VerifiedJWS {
        try Self.prefixed(path) { () throws(JWSError) in try verify(Array(compact.utf8), at: time) }
    }

    private static func prefixed<Result>(_ path: String, _ body: () throws(JWSError) -> Result) throws(JWSError)
        -> Result
    {
        do {
            return try body()
        } catch {
            guard error.message.hasPrefix(path) else { throw JWSError(error.code, "\(path): \(error.message)") }
            throw error
        }
    }

    /// The caller's checks against whichever of `data`, `summary` and `externalPurchaseToken` the notification has.
    private static func check(
        _ expectations: JWSExpectations,
        data: NotificationData?,
        summary: NotificationSummary?,
        token: ExternalPurchaseToken?
    ) throws(JWSError) {
        let found: (bundleID: String?, environment: String?, appAppleID: Int64?, path: String)
        if let data {
            found = (data.bundleID, data.environment, data.appAppleID, "payload.data")
        } else if let summary {
            found = (summary.bundleID, summary.environment, summary.appAppleID, "payload.summary")
        } else if let token {
            found = (token.bundleID, token.environment.rawValue, token.appAppleID, "payload.externalPurchaseToken")
        } else {
            found = (nil, nil, nil, "payload (no data, summary or externalPurchaseToken)")
        }
        try expectations.checkBundleID(found.bundleID, field: "\(found.path).bundleId")
        try expectations.checkEnvironment(found.environment, field: "\(found.path).environment")
        try expectations.checkAppAppleID(
            found.appAppleID, environment: found.environment, field: "\(found.path).appAppleId")
    }
}
