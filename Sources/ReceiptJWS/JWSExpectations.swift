/// The App Store environments that sign data, as the `environment` (and an app transaction's `receiptType`) fields
/// spell them.
public enum AppStoreEnvironment: String, Hashable, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    /// StoreKit testing in Xcode (signed by a certificate Xcode makes, not by Apple).
    case xcode = "Xcode"
    /// Local StoreKit testing.
    case localTesting = "LocalTesting"
}

/// What the caller expects of verified data besides a trusted signature. Each check applies where the payload
/// has the field: a transaction has `bundleId` and `environment`; renewal info only `environment`; an app
/// transaction `bundleId`, `appAppleId` and `receiptType`; a notification whichever of `data`, `summary` and
/// `externalPurchaseToken` it carries, and its nested transaction and renewal info as theirs.
public struct JWSExpectations: Hashable, Sendable {
    /// Require this exact bundle id (`bundleId`); an absent bundle id does not match.
    public var bundleID: String?
    /// Require this environment (`environment`, or `receiptType` of an app transaction); absent does not match.
    public var environment: AppStoreEnvironment?
    /// Require this app Apple id (`appAppleId`) where the payload carries one. Apple omits it outside production,
    /// so it is required to be present only when the payload says its environment is `Production`.
    public var appAppleID: Int64?

    public init(bundleID: String? = nil, environment: AppStoreEnvironment? = nil, appAppleID: Int64? = nil) {
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
    }

    func checkBundleID(_ found: String?, field: String) throws(JWSError) {
        guard let expected = bundleID, found != expected else { return }
        throw JWSError(.wrongBundleID, "\(field) is \(Self.show(found)), expected \"\(expected)\"")
    }

    func checkEnvironment(_ found: String?, field: String) throws(JWSError) {
        guard let expected = environment, found != expected.rawValue else { return }
        throw JWSError(.wrongEnvironment, "\(field) is \(Self.show(found)), expected \"\(expected.rawValue)\"")
    }

    func checkAppAppleID(_ found: Int64?, environment: String?, field: String) throws(JWSError) {
        guard let expected = appAppleID else { return }
        switch found {
        case expected?: return
        case let other?: throw JWSError(.wrongAppAppleID, "\(field) is \(other), expected \(expected)")
        case nil:
            guard environment == AppStoreEnvironment.production.rawValue else { return }
            throw JWSError(.wrongAppAppleID, "\(field) is absent in a Production payload, expected \(expected)")
        }
    }

    private static func show(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "absent" }
}
