import ReceiptModel
import StrictJSON

/// How an entitlement stands at the evaluation time, from best to worst.
public enum EntitlementState: String, CaseIterable, Comparable, Sendable {
    /// Paid for and in force.
    case active
    /// An auto-renewable subscription past its expiry but inside the catalog's grace period: still unlocked.
    case grace
    /// Ran out.
    case expired
    /// Refunded (cancelled by Apple).
    case revoked

    /// `active > grace > expired > revoked`.
    public static func < (lhs: EntitlementState, rhs: EntitlementState) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .active: 3
        case .grace: 2
        case .expired: 1
        case .revoked: 0
        }
    }

    /// Whether the entitlement should be unlocked: active or in its grace period.
    public var unlocks: Bool { self == .active || self == .grace }
}

/// One entitlement and the transaction that gives it its state.
public struct Entitlement: Hashable, Sendable {
    public let name: String
    public let state: EntitlementState
    public let productID: String
    public let transactionID: String
    public let originalTransactionID: String?
    public let purchaseDate: ReceiptDate
    /// When the paid period ends; nil for a lifetime (non-consumable) purchase.
    public let expiresDate: ReceiptDate?
    /// For ``EntitlementState/grace``: when the grace period ends.
    public let graceExpiresDate: ReceiptDate?
}

/// What a buyer has unlocked at one instant.
public struct EntitlementReport: Hashable, Sendable {
    public let now: ReceiptDate
    /// Every entitlement a product in the receipts grants, by name.
    public let entitlements: [String: Entitlement]
    /// Every consumable balance the catalog defines, by name (zero when nothing counts).
    public let balances: [String: Int64]
    /// Product ids found in the receipts but not in the catalog, sorted.
    public let unknownProducts: [String]

    /// Whether `name` is unlocked now: active, or in its grace period.
    public func isActive(_ name: String) -> Bool { entitlements[name]?.state.unlocks ?? false }

    /// The state of `name`, or nil when no product in the receipts grants it.
    public func state(_ name: String) -> EntitlementState? { entitlements[name]?.state }

    /// The balance of a consumable entitlement; zero when none counts.
    public func balance(_ name: String) -> Int64 { balances[name] ?? 0 }

    /// The report as JSON: `now`, `entitlements` (sorted by name), `balances`, `unknown_products`. Dates are
    /// RFC 3339 in UTC.
    public var json: JSONObject {
        var entitlementsObject = JSONObject()
        for name in entitlements.keys.sorted() {
            guard let entitlement = entitlements[name] else { continue }
            var object = JSONObject()
            object["state"] = .string(entitlement.state.rawValue)
            object["product_id"] = .string(entitlement.productID)
            object["transaction_id"] = .string(entitlement.transactionID)
            object["original_transaction_id"] = entitlement.originalTransactionID.map(JSONValue.string) ?? .null
            object["purchase_date"] = .string(entitlement.purchaseDate.rfc3339)
            object["expires_date"] = entitlement.expiresDate.map { .string($0.rfc3339) } ?? .null
            if let grace = entitlement.graceExpiresDate { object["grace_expires_date"] = .string(grace.rfc3339) }
            entitlementsObject[name] = .object(object)
        }
        var balancesObject = JSONObject()
        for name in balances.keys.sorted() { balancesObject[name] = .integer(balances[name] ?? 0) }
        var object = JSONObject()
        object["now"] = .string(now.rfc3339)
        object["entitlements"] = .object(entitlementsObject)
        object["balances"] = .object(balancesObject)
        object["unknown_products"] = .array(unknownProducts.map(JSONValue.string))
        return object
    }
}
