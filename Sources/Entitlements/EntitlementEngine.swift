import PurchaseVerifier
import ReceiptJWS
import ReceiptModel
import ReceiptVerifier

/// Why receipts could not be evaluated together.
public struct EntitlementError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The receipts belong to different apps.
        case mixedBundleIDs = "mixed_bundle_ids"
        /// A balance does not fit in 64 bits.
        case balanceOverflow = "balance_overflow"
        /// A proof carries no transaction to count (renewal info, an app transaction), or lacks a field every
        /// purchase has.
        case noPurchase = "no_purchase"
    }

    public let code: Code
    public let message: String

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Decides what a buyer has unlocked at an instant, from verified receipts and the app's catalog, with the
/// semantics of StoreKit 2's current entitlements.
///
/// The rules (intervals are half-open; "counts" means purchased at or before `now`, and a cancellation counts
/// from its own date on):
/// - Only verified receipts count (the type guarantees it). A transaction id seen in several receipts counts once;
///   its copy from the newest receipt is used, and a refund seen in any copy stands.
/// - Products missing from the catalog are ignored and listed as unknown.
/// - non_consumable: `active` while a counted transaction is not cancelled; `revoked` when all were.
/// - auto_renewable: `active` when a non-cancelled transaction has `purchase_date <= now < expires_date`;
///   `revoked` when the transaction covering now, or else the latest one, was cancelled; otherwise, from the
///   latest transaction, `grace` when `expires_date <= now < expires_date + grace_period`, else `expired`. A
///   transaction without `expires_date` paid for no time: it can only make the product expired or revoked.
///   Apple's renewal info, when given, decides grace instead of the catalog: a subscription whose renewal info
///   says it is in billing retry is in `grace` until its `grace_period_expires_date` (and `expired` when it has
///   none, or it has passed).
///   Within a group only the best-ranked product that is active or in grace grants entitlements; the others that
///   are active or in grace are superseded. Groups are independent.
/// - non_renewing: `active` for `purchase_date <= now < purchase_date + duration` unless cancelled; otherwise
///   `revoked` or `expired` as for subscriptions, without grace.
/// - consumable: a balance per entitlement, the sum of `quantity * amount` over counted, non-cancelled
///   transactions.
/// - An entitlement granted by several products takes the best state and the transaction that gives it; among
///   equals, the one that lasts longer (a lifetime purchase lasts longest).
public struct EntitlementEngine: Sendable {
    public let catalog: Catalog

    public init(catalog: Catalog) {
        self.catalog = catalog
    }

    /// Evaluates the purchases of one app, as a ledger holds them, at `now`, with Apple's renewal info of its
    /// subscriptions (keyed by original transaction id) deciding their grace periods.
    public func evaluate(
        purchases: [InAppPurchase], bundleID: String, renewals: [String: SubscriptionRenewal], at now: ReceiptDate
    ) throws(EntitlementError) -> EntitlementReport {
        try evaluate(
            contents: [Receipt(bundleID: bundleID, creationDate: now, inAppPurchases: purchases)], renewals: renewals,
            at: now)
    }

    /// Evaluates `receipts` at `now`.
    ///
    /// - Throws: ``EntitlementError`` when the receipts are for different apps (one app's purchases must never
    ///   unlock another's) or a balance overflows.
    public func evaluate(_ receipts: [VerifiedReceipt], at now: ReceiptDate) throws(EntitlementError)
        -> EntitlementReport
    {
        try evaluate(contents: receipts.map(\.receipt), at: now)
    }

    /// Evaluates verified proofs of any format at `now`, with the same rules: app receipts, StoreKit 2 signed
    /// transactions (a revocation counts as a refund; the signing date plays the receipt's creation date), the
    /// transaction inside a server notification, and iOS 6 transaction receipts.
    ///
    /// - Throws: ``EntitlementError`` as ``evaluate(_:at:)`` does, and ``EntitlementError/Code/noPurchase`` for a
    ///   proof that carries no transaction (renewal info, an app transaction, a notification without one).
    public func evaluate(_ proofs: [VerifiedPurchaseProof], at now: ReceiptDate) throws(EntitlementError)
        -> EntitlementReport
    {
        var contents: [Receipt] = []
        for (index, proof) in proofs.enumerated() {
            contents.append(try Self.content(of: proof, index: index))
        }
        return try evaluate(contents: contents, at: now)
    }

    /// What a proof contributes, as a receipt holding its purchases.
    private static func content(of proof: VerifiedPurchaseProof, index: Int) throws(EntitlementError) -> Receipt {
        func noPurchase(_ what: String) -> EntitlementError {
            EntitlementError(code: .noPurchase, message: "proof \(index) is \(what), which carries no transaction")
        }
        func invalid(_ reason: String) -> EntitlementError {
            EntitlementError(code: .noPurchase, message: "proof \(index): \(reason)")
        }
        switch proof {
        case .appReceipt(let verified): return verified.receipt
        case .signedTransaction(let transaction, let jws):
            return try receipt(transaction, signed: jws.validationTime, index: index)
        case .serverNotification(let notification):
            guard let transaction = notification.transaction else { throw noPurchase("a notification") }
            return try receipt(
                transaction, signed: transaction.signedDate ?? notification.signedPayload.validationTime, index: index)
        case .legacyTransactionReceipt(let verified):
            let info = verified.purchaseInfo
            guard let bundleID = info.bundleID else { throw invalid("purchase-info has no bid") }
            do {
                let purchase = try info.inAppPurchase()
                return Receipt(bundleID: bundleID, creationDate: purchase.purchaseDate, inAppPurchases: [purchase])
            } catch {
                throw invalid("\(error)")
            }
        case .signedRenewalInfo: throw noPurchase("renewal info")
        case .signedAppTransaction: throw noPurchase("an app transaction")
        case .otherSignedData: throw noPurchase("signed data of an unknown kind")
        }
    }

    private static func receipt(_ transaction: SignedTransaction, signed: ReceiptDate, index: Int)
        throws(EntitlementError) -> Receipt
    {
        guard let bundleID = transaction.bundleID else {
            throw EntitlementError(code: .noPurchase, message: "proof \(index): the transaction has no bundleId")
        }
        do {
            return Receipt(bundleID: bundleID, creationDate: signed, inAppPurchases: [try transaction.inAppPurchase()])
        } catch {
            throw EntitlementError(code: .noPurchase, message: "proof \(index): \(error)")
        }
    }

    private func evaluate(
        contents receipts: [Receipt], renewals: [String: SubscriptionRenewal] = [:], at now: ReceiptDate
    ) throws(EntitlementError) -> EntitlementReport {
        let bundleIDs = Set(receipts.map(\.bundleID))
        guard bundleIDs.count <= 1 else {
            throw EntitlementError(
                code: .mixedBundleIDs,
                message: "the receipts are for different apps: \(bundleIDs.sorted().joined(separator: ", "))")
        }
        let transactions = Self.merge(receipts)
        var byProduct: [String: [InAppPurchase]] = [:]
        var unknown = Set<String>()
        for transaction in transactions {
            guard catalog.product(transaction.productID) != nil else {
                unknown.insert(transaction.productID)
                continue
            }
            if transaction.purchaseDate <= now { byProduct[transaction.productID, default: []].append(transaction) }
        }

        var results: [(product: Catalog.Product, standing: Standing)] = []
        var balances: [String: Int64] = [:]
        for product in catalog.products {
            let counted = byProduct[product.id] ?? []
            switch product.type {
            case .consumable:
                for name in product.entitlements { balances[name] = balances[name] ?? 0 }
                for transaction in counted where !transaction.isCancelled(at: now) {
                    let units = transaction.quantity ?? 1
                    let (added, overflow) = units.multipliedReportingOverflow(by: product.amount ?? 0)
                    for name in product.entitlements {
                        let (total, sumOverflow) = (balances[name] ?? 0).addingReportingOverflow(added)
                        guard !overflow, !sumOverflow else {
                            throw EntitlementError(
                                code: .balanceOverflow, message: "the balance of \"\(name)\" does not fit in 64 bits")
                        }
                        balances[name] = total
                    }
                }
            case .nonConsumable:
                if let standing = Self.lifetime(counted, now: now) { results.append((product, standing)) }
            case .autoRenewable:
                // A subscription transaction without an expiry paid for no time at all.
                let periods = counted.map { transaction in
                    Period(
                        transaction: transaction, end: transaction.expiresDate ?? transaction.purchaseDate,
                        mayHaveGrace: transaction.expiresDate != nil)
                }
                if let standing = Self.periodic(periods, now: now, grace: catalog.gracePeriod, renewals: renewals) {
                    results.append((product, standing))
                }
            case .nonRenewing:
                guard let duration = product.duration else { break }  // the catalog requires one
                let periods = counted.map { Period(transaction: $0, end: $0.purchaseDate.adding(duration)) }
                if let standing = Self.periodic(periods, now: now, grace: nil) { results.append((product, standing)) }
            }
        }

        var entitlements: [String: Entitlement] = [:]
        for (product, standing) in Self.removingSuperseded(results) {
            for name in product.entitlements {
                let candidate = standing.entitlement(name)
                if let current = entitlements[name], !Self.isBetter(candidate, than: current) { continue }
                entitlements[name] = candidate
            }
        }
        return EntitlementReport(
            now: now, entitlements: entitlements, balances: balances, unknownProducts: unknown.sorted())
    }

    /// One transaction per id: the copy from the newest receipt, cancelled if any copy says so (earliest date).
    static func merge(_ receipts: [Receipt]) -> [InAppPurchase] {
        var merged: [String: (purchase: InAppPurchase, created: ReceiptDate)] = [:]
        var order: [String] = []
        for receipt in receipts {
            for purchase in receipt.inAppPurchases {
                guard let existing = merged[purchase.transactionID] else {
                    merged[purchase.transactionID] = (purchase, receipt.creationDate)
                    order.append(purchase.transactionID)
                    continue
                }
                var chosen = receipt.creationDate > existing.created ? (purchase, receipt.creationDate) : existing
                let cancellations = [existing.purchase.cancellationDate, purchase.cancellationDate].compactMap { $0 }
                chosen.0.cancellationDate = cancellations.min()
                merged[purchase.transactionID] = chosen
            }
        }
        return order.compactMap { merged[$0]?.purchase }
    }

    /// A transaction with the instant its paid period ends.
    struct Period {
        let transaction: InAppPurchase
        let end: ReceiptDate
        /// Whether a grace period may follow it (not for a subscription transaction that has no expiry).
        var mayHaveGrace = true
    }

    /// A product's state with the transaction behind it.
    struct Standing {
        let state: EntitlementState
        let transaction: InAppPurchase
        let expires: ReceiptDate?
        let graceEnd: ReceiptDate?

        func entitlement(_ name: String) -> Entitlement {
            Entitlement(
                name: name, state: state, productID: transaction.productID, transactionID: transaction.transactionID,
                originalTransactionID: transaction.originalTransactionID, purchaseDate: transaction.purchaseDate,
                expiresDate: expires, graceExpiresDate: graceEnd)
        }
    }

    static func lifetime(_ counted: [InAppPurchase], now: ReceiptDate) -> Standing? {
        let live = counted.filter { !$0.isCancelled(at: now) }
        if let first = live.min(by: { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }) {
            return Standing(state: .active, transaction: first, expires: nil, graceEnd: nil)
        }
        guard let last = counted.max(by: { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) })
        else { return nil }
        return Standing(state: .revoked, transaction: last, expires: nil, graceEnd: nil)
    }

    static func periodic(
        _ periods: [Period], now: ReceiptDate, grace: ISODuration?, renewals: [String: SubscriptionRenewal] = [:]
    ) -> Standing? {
        func lastEnding(_ candidates: [Period]) -> Period? {
            candidates.max {
                ($0.end, $0.transaction.purchaseDate, $0.transaction.transactionID)
                    < ($1.end, $1.transaction.purchaseDate, $1.transaction.transactionID)
            }
        }
        let covering = periods.filter { $0.transaction.purchaseDate <= now && now < $0.end }
        if let active = lastEnding(covering.filter { !$0.transaction.isCancelled(at: now) }) {
            return Standing(state: .active, transaction: active.transaction, expires: active.end, graceEnd: nil)
        }
        // The latest period covers now whenever any refunded one does, so "covering or latest refunded" is this:
        guard let latest = lastEnding(periods) else { return nil }
        if latest.transaction.isCancelled(at: now) {
            return Standing(state: .revoked, transaction: latest.transaction, expires: latest.end, graceEnd: nil)
        }
        let subscription = latest.transaction.originalTransactionID ?? latest.transaction.transactionID
        if latest.mayHaveGrace, let renewal = renewals[subscription] {
            if renewal.isInBillingRetryPeriod, let graceEnd = renewal.gracePeriodExpiresDate, now < graceEnd {
                return Standing(state: .grace, transaction: latest.transaction, expires: latest.end, graceEnd: graceEnd)
            }
        } else if let grace, latest.mayHaveGrace, now < latest.end.adding(grace) {
            return Standing(
                state: .grace, transaction: latest.transaction, expires: latest.end, graceEnd: latest.end.adding(grace))
        }
        return Standing(state: .expired, transaction: latest.transaction, expires: latest.end, graceEnd: nil)
    }

    /// Within each subscription group, keeps only the best-ranked product that is active or in grace among those
    /// that are; products that are expired or revoked keep their state.
    static func removingSuperseded(
        _ results: [(product: Catalog.Product, standing: Standing)]
    ) -> [(product: Catalog.Product, standing: Standing)] {
        var winners: [String: Int] = [:]
        for (product, standing) in results where standing.state.unlocks {
            guard let group = product.group, let rank = product.rank else { continue }
            winners[group] = min(winners[group] ?? rank, rank)
        }
        return results.filter { product, standing in
            guard standing.state.unlocks, let group = product.group else { return true }
            return product.rank == winners[group]
        }
    }

    /// Whether `candidate` should replace `current`: a better state, or the same state lasting longer.
    static func isBetter(_ candidate: Entitlement, than current: Entitlement) -> Bool {
        if candidate.state != current.state { return candidate.state > current.state }
        let forever = ReceiptDate(millisecondsSince1970: .max)
        let candidateEnd = candidate.graceExpiresDate ?? candidate.expiresDate ?? forever
        let currentEnd = current.graceExpiresDate ?? current.expiresDate ?? forever
        if candidateEnd != currentEnd { return candidateEnd > currentEnd }
        return (candidate.purchaseDate, candidate.transactionID) > (current.purchaseDate, current.transactionID)
    }
}

extension InAppPurchase {
    /// Whether a refund had happened by `now`.
    func isCancelled(at now: ReceiptDate) -> Bool { cancellationDate.map { $0 <= now } ?? false }
}

/// What Apple's renewal info says of a subscription's access after its paid period: whether Apple is retrying
/// the billing and until when the buyer keeps access meanwhile.
public struct SubscriptionRenewal: Hashable, Sendable {
    /// `is_in_billing_retry_period`.
    public var isInBillingRetryPeriod: Bool
    /// `grace_period_expires_date`, when Apple grants a billing grace period.
    public var gracePeriodExpiresDate: ReceiptDate?

    /// Renewal state as Apple's renewal info gives it.
    public init(isInBillingRetryPeriod: Bool, gracePeriodExpiresDate: ReceiptDate?) {
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }
}
