import HTTPServer
import Entitlements
import ReceiptDER
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// `GET /inApps/v2/history/{transactionId}` (Apple's Get Transaction History, version 2; version 1's path answers
/// the same): every transaction of the customer who made `transactionId` (a transaction or original transaction
/// id) in the token's app, signed, 20 a page, in purchase order (`sort` `ASCENDING`, the default, or
/// `DESCENDING`), filtered as Apple's by `startDate`/`endDate` (purchase date, milliseconds), `productId`,
/// `productType`, `subscriptionGroupIdentifier`, `inAppOwnershipType` and `revoked`. `revision` continues after
/// the page that returned it, with the same query.
///
/// `GET /inApps/v2/refund/lookup/{transactionId}` (Apple's Get Refund History): the same customer's refunded
/// transactions, paged the same way by `revision`.
extension ReceiptService {
    /// Transactions in one page, as Apple's.
    static let historyPageSize = 20

    func storeTransactionHistory(_ request: HTTPRequest, bundleID: String, transactionID: String)
        throws(ServiceError) -> HTTPResponse
    {
        let signing = try storeAPISignedData(bundleID: bundleID)
        let page = try historyPage(try HistoryQuery(request.query), signing, transactionID: transactionID)
        return .json(
            JSONObject([
                "revision": .string(page.revision),
                "hasMore": .bool(page.hasMore),
                "bundleId": .string(bundleID),
                "appAppleId": .integer(signing.app.appAppleID),
                "environment": .string(signing.environment.rawValue),
                "signedTransactions": .array(page.signed),
            ]))
    }

    func storeRefundHistory(_ request: HTTPRequest, bundleID: String, transactionID: String)
        throws(ServiceError) -> HTTPResponse
    {
        let signing = try storeAPISignedData(bundleID: bundleID)
        var query = try HistoryQuery(request.query.filter { $0.name == "revision" })
        query.revoked = true
        let page = try historyPage(query, signing, transactionID: transactionID)
        return .json(
            JSONObject([
                "signedTransactions": .array(page.signed), "revision": .string(page.revision),
                "hasMore": .bool(page.hasMore),
            ]))
    }

    /// One page of the transactions `query` selects among those of the customer of `transactionID`, signed, with
    /// the revision of the next page and whether there is one.
    private func historyPage(_ query: HistoryQuery, _ signing: StoreAPISignedData, transactionID: String)
        throws(ServiceError) -> (signed: [JSONValue], revision: String, hasMore: Bool)
    {
        let customerID = try storeAPICustomer(of: transactionID, bundleID: signing.app.bundleID)
        let all = try storeAPILedger { () throws(LedgerError) in
            try ledger.transactions(customerID: customerID, bundleID: signing.app.bundleID)
        }
        var selected = all.filter { query.selects($0, signing) }
        if query.descending { selected.reverse() }
        if let after = query.after {
            selected = selected.filter {
                query.descending ? HistoryQuery.key($0) < after : HistoryQuery.key($0) > after
            }
        }
        let page = selected.prefix(Self.historyPageSize)
        var signed: [JSONValue] = []
        for transaction in page { signed.append(.string(try signing.sign(signing.transactionPayload(transaction)))) }
        let last = page.last.map(HistoryQuery.key) ?? query.after
        return (signed, query.revision(after: last), selected.count > page.count)
    }

    /// The customer of `transactionID`, a transaction or an original transaction id of the app; Apple's 4040010
    /// when the ledger holds neither.
    func storeAPICustomer(of transactionID: String, bundleID: String) throws(ServiceError) -> String {
        let stored = try storeAPILedger { () throws(LedgerError) in
            try ledger.transaction(id: transactionID)
        }
        if let stored, stored.bundleID == bundleID { return stored.customerID }
        let customer = try storeAPILedger { () throws(LedgerError) in
            try ledger.customerID(originalTransactionID: transactionID)
        }
        guard let customer,
            try storeAPILedger({ () throws(LedgerError) in
                try !ledger.transactions(customerID: customer, bundleID: bundleID).isEmpty
            })
        else {
            throw .apple(404, 4_040_010, "Transaction id not found: \(transactionID)")
        }
        return customer
    }
}

/// The query of a transaction history request, validated with Apple's error codes.
struct HistoryQuery {
    /// Where a page ends: purchase date, then transaction id.
    struct Key: Comparable {
        let purchaseDate: Int64
        let transactionID: String

        static func < (lhs: Key, rhs: Key) -> Bool {
            guard lhs.purchaseDate == rhs.purchaseDate else { return lhs.purchaseDate < rhs.purchaseDate }
            return lhs.transactionID.utf8.lexicographicallyPrecedes(rhs.transactionID.utf8)
        }
    }

    static let productTypes: [String: Catalog.ProductType] = [
        "AUTO_RENEWABLE": .autoRenewable, "NON_RENEWABLE": .nonRenewing, "CONSUMABLE": .consumable,
        "NON_CONSUMABLE": .nonConsumable,
    ]

    var descending = false
    var start: Int64?
    var end: Int64?
    var productIDs: Set<String> = []
    var types: Set<Catalog.ProductType> = []
    var groups: Set<String> = []
    var revoked: Bool?
    /// `inAppOwnershipType` `FAMILY_SHARED`: the store sells no family-shared purchases, so nothing is selected.
    var familySharedOnly = false
    var after: Key?

    /// The query of the arguments `query`; arguments Apple does not define are ignored.
    init(_ query: [(name: String, value: String)]) throws(ServiceError) {
        var revisionText: String?
        for (name, value) in query {
            switch name {
            case "sort":
                guard value == "ASCENDING" || value == "DESCENDING" else {
                    throw .apple(400, 4_000_021, "Invalid sort: \"\(value)\" (ASCENDING or DESCENDING)")
                }
                descending = value == "DESCENDING"
            case "startDate": start = try Self.milliseconds(value, code: 4_000_015, "Invalid start date")
            case "endDate": end = try Self.milliseconds(value, code: 4_000_016, "Invalid end date")
            case "productId": productIDs.insert(value)
            case "productType":
                guard let type = Self.productTypes[value] else {
                    throw .apple(400, 4_000_022, "Invalid product type: \"\(value)\"")
                }
                types.insert(type)
            case "subscriptionGroupIdentifier": groups.insert(value)
            case "inAppOwnershipType":
                guard value == "PURCHASED" || value == "FAMILY_SHARED" else {
                    throw .apple(400, 4_000_026, "Invalid in-app ownership type: \"\(value)\"")
                }
                familySharedOnly = value == "FAMILY_SHARED"
            case "revoked":
                switch value.lowercased() {
                case "true": revoked = true
                case "false": revoked = false
                default: throw .apple(400, 4_000_030, "Invalid revoked: \"\(value)\" (true or false)")
                }
            case "revision": revisionText = value
            default: continue
            }
        }
        if let start, let end, start > end {
            throw .apple(400, 4_000_013, "Start date after end date: startDate \(start) is after endDate \(end)")
        }
        if let revisionText { after = try Self.key(revision: revisionText, descending: descending) }
    }

    /// Whether the filters select `transaction`.
    func selects(_ transaction: LedgerTransaction, _ signing: StoreAPISignedData) -> Bool {
        let purchase = transaction.purchase
        let date = purchase.purchaseDate.millisecondsSince1970
        if familySharedOnly { return false }
        if let start, date < start { return false }
        if let end, date >= end { return false }
        if !productIDs.isEmpty && !productIDs.contains(purchase.productID) { return false }
        if !types.isEmpty {
            guard let type = signing.app.catalog.product(purchase.productID)?.type, types.contains(type) else {
                return false
            }
        }
        if !groups.isEmpty {
            guard let group = signing.subscriptionGroup(purchase.productID), groups.contains(group) else {
                return false
            }
        }
        if let revoked, revoked != (purchase.cancellationDate != nil) { return false }
        return true
    }

    static func key(_ transaction: LedgerTransaction) -> Key {
        Key(
            purchaseDate: transaction.purchase.purchaseDate.millisecondsSince1970,
            transactionID: transaction.purchase.transactionID)
    }

    /// The opaque `revision` that continues after `key` (the start, when nil) in this query's order.
    func revision(after key: Key?) -> String {
        let text = "\(descending ? "D" : "A"):\(key.map { "\($0.purchaseDate):\($0.transactionID)" } ?? "")"
        return Base64URL.encode(Array(text.utf8))
    }

    private static func key(revision: String, descending: Bool) throws(ServiceError) -> Key? {
        let invalid = ServiceError.apple(
            400, 4_000_005, "Invalid request revision: \"\(revision)\" is not a revision of this query")
        guard let bytes = try? Base64URL.decode(Array(revision.utf8)) else { throw invalid }
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == (descending ? "D" : "A") else { throw invalid }
        if parts.count == 2 && parts[1].isEmpty { return nil }
        guard parts.count == 3, let date = Int64(parts[1]), !parts[2].isEmpty else { throw invalid }
        return Key(purchaseDate: date, transactionID: String(parts[2]))
    }

    private static func milliseconds(_ text: String, code: Int, _ what: String) throws(ServiceError) -> Int64 {
        guard let value = Int64(text), value >= 0 else {
            throw .apple(400, code, "\(what): \"\(text)\" is not milliseconds since 1970")
        }
        return value
    }
}
