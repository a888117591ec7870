import ReceiptModel

/// The stored columns of a transaction, in table order, as every store keeps them: the order rows are read and
/// written in, and the order conflicting fields are named in. Dates are milliseconds since 1970 (negative before),
/// flags 0 or 1, ids and other numbers 64-bit integers.
enum LedgerColumn: Int32, StoredColumn {
    case transactionID
    case customerID
    case bundleID
    case productID
    case quantity
    case originalTransactionID
    case purchaseDate
    case originalPurchaseDate
    case productType
    case expiresDate
    case webOrderLineItemID
    case cancellationDate
    case isTrialPeriod
    case isInIntroOfferPeriod
    case promotionalOfferID
    case appAccountToken

    /// The SQL column.
    var name: String {
        switch self {
        case .transactionID: "transaction_id"
        case .customerID: "customer_id"
        case .bundleID: "bundle_id"
        case .productID: "product_id"
        case .quantity: "quantity"
        case .originalTransactionID: "original_transaction_id"
        case .purchaseDate: "purchase_date_ms"
        case .originalPurchaseDate: "original_purchase_date_ms"
        case .productType: "product_type"
        case .expiresDate: "expires_date_ms"
        case .webOrderLineItemID: "web_order_line_item_id"
        case .cancellationDate: "cancellation_date_ms"
        case .isTrialPeriod: "is_trial_period"
        case .isInIntroOfferPeriod: "is_in_intro_offer_period"
        case .promotionalOfferID: "promotional_offer_id"
        case .appAccountToken: "app_account_token"
        }
    }

    /// The field's name in verifyReceipt JSON, as conflicts report it.
    var jsonName: String {
        name.hasSuffix("_ms") ? String(name.dropLast(3)) : name
    }

    /// Whether the column holds a flag (0 or 1).
    var isFlag: Bool {
        self == .isTrialPeriod || self == .isInIntroOfferPeriod
    }

    /// The column's value for `transaction`.
    func value(in transaction: LedgerTransaction) -> LedgerValue {
        let purchase = transaction.purchase
        return switch self {
        case .transactionID: .text(purchase.transactionID)
        case .customerID: .text(transaction.customerID)
        case .bundleID: .text(transaction.bundleID)
        case .productID: .text(purchase.productID)
        case .quantity: LedgerValue(purchase.quantity)
        case .originalTransactionID: LedgerValue(purchase.originalTransactionID)
        case .purchaseDate: .integer(purchase.purchaseDate.millisecondsSince1970)
        case .originalPurchaseDate: LedgerValue(purchase.originalPurchaseDate?.millisecondsSince1970)
        case .productType: LedgerValue(purchase.productType)
        case .expiresDate: LedgerValue(purchase.expiresDate?.millisecondsSince1970)
        case .webOrderLineItemID: LedgerValue(purchase.webOrderLineItemID)
        case .cancellationDate: LedgerValue(purchase.cancellationDate?.millisecondsSince1970)
        case .isTrialPeriod: LedgerValue(purchase.isTrialPeriod.map { $0 ? 1 : 0 })
        case .isInIntroOfferPeriod: LedgerValue(purchase.isInIntroOfferPeriod.map { $0 ? 1 : 0 })
        case .promotionalOfferID: LedgerValue(purchase.promotionalOfferID)
        case .appAccountToken: LedgerValue(transaction.appAccountToken)
        }
    }

    /// The columns a replayed `record` must match: all but the id (equal by definition) and the cancellation date
    /// (set only by `recordCancellation`).
    static let compared = allCases.filter { $0 != .transactionID && $0 != .cancellationDate }

    /// `transaction` as it will be stored: no cancellation date, no unknown attributes.
    static func storable(_ transaction: LedgerTransaction) -> LedgerTransaction {
        var storable = transaction
        storable.purchase.cancellationDate = nil
        storable.purchase.unknownAttributes = []
        return storable
    }

    /// The JSON names of the compared fields whose stored values differ, in column order.
    static func differingFields(_ stored: LedgerTransaction, _ candidate: LedgerTransaction) -> [String] {
        compared.filter { $0.value(in: stored) != $0.value(in: candidate) }.map(\.jsonName)
    }

    /// What recording `candidate` comes to when a transaction with its id is `stored`: already recorded when every
    /// compared field is equal, or when only the customer differs and the candidate's is the placeholder `apple:`
    /// followed by the original transaction id (a known customer wins over an unknown one); adoption when only the
    /// customer differs and the stored one is that placeholder; else a conflict naming the fields that differ.
    static func replaying(
        _ candidate: LedgerTransaction, over stored: LedgerTransaction
    ) throws(LedgerError) -> Replay {
        let differing = differingFields(stored, candidate)
        if differing.isEmpty { return .alreadyRecorded(stored) }
        if differing == [customerID.jsonName], let original = stored.purchase.originalTransactionID {
            let placeholder = LedgerValue.text(placeholderPrefix + original)
            if LedgerValue.text(stored.customerID) == placeholder {
                var adopted = stored
                adopted.customerID = candidate.customerID
                return .adopting(placeholder: stored.customerID, adopted)
            }
            if LedgerValue.text(candidate.customerID) == placeholder { return .alreadyRecorded(stored) }
        }
        throw LedgerError(
            .conflict,
            "transaction \(stored.purchase.transactionID) is already recorded with a different "
                + differing.joined(separator: ", "),
            conflictingFields: differing)
    }

    /// What the customer id of a transaction not known to be anyone's yet begins with, before its original
    /// transaction id.
    static let placeholderPrefix = "apple:"

    /// What recording a transaction whose id is stored comes to (see ``replaying(_:over:)``).
    enum Replay {
        /// Exactly this is stored.
        case alreadyRecorded(LedgerTransaction)
        /// The stored transaction belongs to `placeholder`, whose transactions all become the candidate's
        /// customer's: the transaction as it is stored then.
        case adopting(placeholder: String, LedgerTransaction)
    }

    /// The transaction `stored` (the one with id `transactionID`, nil when there is none) without its cancellation
    /// date, and whether that is new, so the date is to be cleared. Throws notFound without a transaction.
    static func withdrawing(
        _ stored: LedgerTransaction?, transactionID: String
    ) throws(LedgerError) -> (withdrawn: LedgerTransaction, isNew: Bool) {
        guard var withdrawn = stored else {
            throw LedgerError(.notFound, "no transaction \(transactionID) is recorded to withdraw its refund")
        }
        let isNew = withdrawn.purchase.cancellationDate != nil
        withdrawn.purchase.cancellationDate = nil
        return (withdrawn, isNew)
    }

    /// The transaction `stored` (the one with id `transactionID`, nil when there is none) cancelled at `date`, and
    /// whether that is new, so the date is to be stored. Throws notFound without a transaction, and a conflict on
    /// `cancellation_date` when it is cancelled at another date.
    static func cancelling(
        _ stored: LedgerTransaction?, transactionID: String, at date: ReceiptDate
    ) throws(LedgerError) -> (cancelled: LedgerTransaction, isNew: Bool) {
        guard var cancelled = stored else {
            throw LedgerError(.notFound, "no transaction \(transactionID) is recorded to cancel")
        }
        switch cancelled.purchase.cancellationDate {
        case date:
            return (cancelled, false)
        case let recorded?:
            throw LedgerError(
                .conflict, "transaction \(transactionID) is already cancelled at \(recorded), not at \(date)",
                conflictingFields: [cancellationDate.jsonName])
        case nil:
            cancelled.purchase.cancellationDate = date
            return (cancelled, true)
        }
    }

    /// The transaction of one stored row, whose columns `text` and `integer` read (nil for NULL); `purpose` begins
    /// the error a NULL in a required column throws.
    static func decode(
        purpose: String, text: (LedgerColumn) -> String?, integer: (LedgerColumn) -> Int64?
    ) throws(LedgerError) -> LedgerTransaction {
        func date(_ column: LedgerColumn) -> ReceiptDate? {
            integer(column).map(ReceiptDate.init(millisecondsSince1970:))
        }
        func flag(_ column: LedgerColumn) -> Bool? { integer(column).map { $0 != 0 } }
        func required<Value>(_ value: Value?, _ column: LedgerColumn) throws(LedgerError) -> Value {
            guard let value else { throw LedgerError(.storage, "\(purpose): column \(column.name) is NULL") }
            return value
        }
        let purchase = try InAppPurchase(
            productID: required(text(.productID), .productID),
            transactionID: required(text(.transactionID), .transactionID),
            purchaseDate: required(date(.purchaseDate), .purchaseDate),
            quantity: integer(.quantity),
            originalTransactionID: text(.originalTransactionID),
            originalPurchaseDate: date(.originalPurchaseDate),
            productType: integer(.productType),
            expiresDate: date(.expiresDate),
            webOrderLineItemID: integer(.webOrderLineItemID),
            cancellationDate: date(.cancellationDate),
            isTrialPeriod: flag(.isTrialPeriod),
            isInIntroOfferPeriod: flag(.isInIntroOfferPeriod),
            promotionalOfferID: text(.promotionalOfferID))
        return try LedgerTransaction(
            customerID: required(text(.customerID), .customerID), bundleID: required(text(.bundleID), .bundleID),
            purchase: purchase, appAccountToken: text(.appAccountToken))
    }
}

/// A value of a column, or one bound to a statement parameter.
enum LedgerValue: Equatable {
    case integer(Int64)
    case text(String)
    case null

    /// `.integer`, or `.null` for nil.
    init(_ value: Int64?) {
        self = value.map { .integer($0) } ?? .null
    }

    /// `.text`, or `.null` for nil.
    init(_ value: String?) {
        self = value.map { .text($0) } ?? .null
    }

    /// Equal as the stores keep and compare them: text byte for byte in UTF-8, not by Unicode canonical
    /// equivalence as `String` compares.
    static func == (lhs: LedgerValue, rhs: LedgerValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let left), .integer(let right)): left == right
        case (.text(let left), .text(let right)): left.utf8.elementsEqual(right.utf8)
        case (.null, .null): true
        default: false
        }
    }
}

/// One step of a store's schema history: migration N (counting from 1) takes the schema from version N-1 to N.
/// Migrations are only ever appended, never edited.
struct LedgerMigration: Sendable {
    let summary: String
    let statements: [String]
}
