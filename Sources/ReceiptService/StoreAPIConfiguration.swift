import Entitlements
import HTTPClient
import ReceiptCrypto
import ReceiptJWS
import ReceiptSigner
import StrictJSON

extension ServiceConfiguration {
    /// `store_api`: the service answers Apple's App Store Server API for the transactions in its ledger and sends
    /// Server Notifications V2 about what it records, signed ES256 with the service's `signing` key.
    /// ```json
    /// "store_api": {
    ///   "apps": [{"bundle_id": "com.example.game", "app_apple_id": 1234567890, "catalog_id": "game",
    ///             "notification_urls": ["http://127.0.0.1:9000/apple"]}],
    ///   "keys": [{"issuer_id": "57246542-96fe-1a63-e053-0824d011072a", "key_id": "ABC123DEFG",
    ///             "public_key": "keys/ABC123DEFG.pub.pem"}],
    ///   "notification_retry_seconds": [3600, 43200, 86400, 172800, 259200]
    /// }
    /// ```
    public struct StoreAPI: Sendable {
        /// One app the API answers for.
        public struct App: Sendable {
            public var bundleID: String
            /// `appAppleId` in notifications.
            public var appAppleID: Int64
            /// Its catalog: each product's `type` and subscription group.
            public var catalog: Catalog
            /// Where its notifications go (`http://` URLs); none sends none.
            public var notificationURLs: [String]
            /// `storefront` (ISO 3166-1 alpha-3, `USA`) and `storefrontId` (`143441`) of its transactions, when set.
            public var storefront: String?
            public var storefrontID: String?

            public init(
                bundleID: String, appAppleID: Int64, catalog: Catalog, notificationURLs: [String],
                storefront: String? = nil, storefrontID: String? = nil
            ) {
                self.bundleID = bundleID
                self.appAppleID = appAppleID
                self.catalog = catalog
                self.notificationURLs = notificationURLs
                self.storefront = storefront
                self.storefrontID = storefrontID
            }
        }

        public var apps: [App]
        /// The keys whose tokens are accepted.
        public var keys: [APIKey]
        /// Seconds to wait before each retry of a notification that was not answered 200, as Apple's: the first
        /// retry after the first number, and so on; when they are spent, no more attempts.
        public var notificationRetrySeconds: [Int]
        /// Signs responses and notifications: the service's key, x5c its certificate, chain and root.
        public var signer: JWSSigner

        /// Apple's schedule: 1, 12, 24, 48 and 72 hours.
        public static let appleRetrySeconds = [3600, 43_200, 86_400, 172_800, 259_200]

        public init(apps: [App], keys: [APIKey], notificationRetrySeconds: [Int] = appleRetrySeconds, signer: JWSSigner)
        {
            self.apps = apps
            self.keys = keys
            self.notificationRetrySeconds = notificationRetrySeconds
            self.signer = signer
        }

        /// The app `bundleID`, if configured.
        public func app(_ bundleID: String) -> App? { apps.first { $0.bundleID == bundleID } }
    }

    /// Reads `store_api`, which needs `signing` with an EC P-256 key and a catalog for each app.
    static func storeAPI(
        _ reader: JSONObjectReader, signer: ReceiptSigner?, trustAnchors: [Certificate], catalogs: [String: Catalog],
        resolve: (String) -> String
    ) throws(JSONFieldError) -> StoreAPI? {
        guard let settings = try reader.object("store_api") else { return nil }
        try settings.rejectUnknownKeys(allowed: ["apps", "keys", "notification_retry_seconds"])
        let jwsSigner = try Self.jwsSigner(signer, trustAnchors: trustAnchors, path: "store_api")
        var apps: [StoreAPI.App] = []
        for (index, value) in (try settings.array("apps") ?? []).enumerated() {
            let app = try Self.storeApp(
                JSONObjectReader(value, path: "\(settings.path("apps"))[\(index)]"), catalogs: catalogs)
            if apps.contains(where: { $0.bundleID == app.bundleID }) {
                throw JSONFieldError(
                    path: "\(settings.path("apps"))[\(index)].bundle_id", rule: "\"\(app.bundleID)\" is listed twice")
            }
            apps.append(app)
        }
        guard !apps.isEmpty else { throw settings.error("apps", "is required: list at least one app") }
        var keys: [APIKey] = []
        for (index, value) in (try settings.array("keys") ?? []).enumerated() {
            let key = try Self.apiKey(JSONObjectReader(value, path: "\(settings.path("keys"))[\(index)]"), resolve)
            if keys.contains(where: { $0.keyID == key.keyID }) {
                throw JSONFieldError(
                    path: "\(settings.path("keys"))[\(index)].key_id", rule: "\"\(key.keyID)\" is listed twice")
            }
            keys.append(key)
        }
        guard !keys.isEmpty else {
            throw settings.error("keys", "is required: list the API keys whose tokens are accepted")
        }
        var retries = StoreAPI.appleRetrySeconds
        if let values = try settings.array("notification_retry_seconds") {
            guard values.count <= 10 else {
                throw settings.error("notification_retry_seconds", "lists \(values.count) retries; at most 10")
            }
            retries = []
            for (index, value) in values.enumerated() {
                guard case .number(let text) = value, let seconds = Int(text), (1...604_800).contains(seconds) else {
                    throw JSONFieldError(
                        path: "\(settings.path("notification_retry_seconds"))[\(index)]",
                        rule: "must be a whole number of seconds from 1 to 604800 (a week)")
                }
                retries.append(seconds)
            }
        }
        return StoreAPI(apps: apps, keys: keys, notificationRetrySeconds: retries, signer: jwsSigner)
    }

    /// The service's signing key as an ES256 signer whose x5c ends at a root, as Apple's do: the configured chain,
    /// and the trusted root that issued its last certificate when the chain stops short of one.
    private static func jwsSigner(_ signer: ReceiptSigner?, trustAnchors: [Certificate], path: String)
        throws(JSONFieldError) -> JWSSigner
    {
        guard let credentials = signer?.credentials else {
            throw JSONFieldError(path: path, rule: "needs \"signing\": responses and notifications are signed with it")
        }
        var chain = [credentials.certificate] + credentials.chain
        if let last = chain.last, !last.isSelfSigned,
            let root = trustAnchors.first(where: { $0.isSelfSigned && last.isIssued(by: $0) })
        {
            chain.append(root)
        }
        guard chain.last?.isSelfSigned == true else {
            throw JSONFieldError(
                path: path,
                rule: "the signing chain must end at its root, which Apple's verifiers require in x5c: put the root "
                    + "of \"\(chain.last?.issuer ?? "")\" in signing.chain or trust")
        }
        do {
            return try JWSSigner(key: credentials.key, chain: chain)
        } catch {
            throw JSONFieldError(path: path, rule: "cannot sign with \"signing\": \(error.message)")
        }
    }

    private static func storeApp(_ app: JSONObjectReader, catalogs: [String: Catalog]) throws(JSONFieldError)
        -> StoreAPI.App
    {
        try app.rejectUnknownKeys(allowed: [
            "bundle_id", "app_apple_id", "catalog_id", "notification_urls", "storefront", "storefront_id",
        ])
        let bundleID = try app.requiredString("bundle_id")
        guard !bundleID.isEmpty else { throw app.error("bundle_id", "must not be empty") }
        guard let appAppleID = try app.integer("app_apple_id", in: Int64(1)...Int64.max) else {
            throw app.error("app_apple_id", "is required: the app's Apple ID (App Store Connect, App Information)")
        }
        let catalogID = try app.requiredString("catalog_id")
        guard let catalog = catalogs[catalogID] else {
            throw app.error("catalog_id", "names no catalog of \"catalogs\": \"\(catalogID)\"")
        }
        if let other = catalog.bundleID, other != bundleID {
            throw app.error("catalog_id", "catalog \"\(catalogID)\" describes \(other), not \(bundleID)")
        }
        let urls = try app.strings("notification_urls") ?? []
        for (index, url) in urls.enumerated() {
            do {
                try HTTPClient.checkURL(url)
            } catch {
                throw JSONFieldError(
                    path: "\(app.path("notification_urls"))[\(index)]",
                    rule: "\(error.message) (an http:// URL; put TLS in front of the receiver with a proxy)")
            }
        }
        let storefront = try app.string("storefront")
        if let storefront, storefront.utf8.count != 3 || !storefront.utf8.allSatisfy({ (65...90).contains($0) }) {
            throw app.error("storefront", "must be an ISO 3166-1 alpha-3 country code such as USA")
        }
        let storefrontID = try app.string("storefront_id")
        if let storefrontID, storefrontID.isEmpty || !storefrontID.utf8.allSatisfy({ (48...57).contains($0) }) {
            throw app.error("storefront_id", "must be Apple's storefront number such as 143441")
        }
        return StoreAPI.App(
            bundleID: bundleID, appAppleID: appAppleID, catalog: catalog, notificationURLs: urls,
            storefront: storefront, storefrontID: storefrontID)
    }

    private static func apiKey(_ key: JSONObjectReader, _ resolve: (String) -> String) throws(JSONFieldError)
        -> APIKey
    {
        try key.rejectUnknownKeys(allowed: ["issuer_id", "key_id", "public_key"])
        let issuerID = try key.requiredString("issuer_id")
        let keyID = try key.requiredString("key_id")
        guard !issuerID.isEmpty else { throw key.error("issuer_id", "must not be empty") }
        guard !keyID.isEmpty else { throw key.error("key_id", "must not be empty") }
        let file = try key.requiredString("public_key")
        let bytes = try read(resolve(file), for: key.path("public_key"))
        do {
            return try APIKey(issuerID: issuerID, keyID: keyID, publicKey: PublicKey(pemOrDER: bytes))
        } catch let error as APITokenError {
            throw key.error("public_key", "\(file): \(error.message)")
        } catch {
            throw key.error("public_key", "\(file): \(error)")
        }
    }
}
