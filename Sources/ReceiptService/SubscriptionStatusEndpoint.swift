import HTTPServer
import ReceiptLedger
import StrictJSON

/// `GET /inApps/v1/subscriptions/{transactionId}` (Apple's Get All Subscription Statuses): for each subscription
/// group of the customer who made `transactionId` in the token's app, the latest transaction of each of their
/// subscriptions in it, with its `status` (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked), signed
/// transaction and signed renewal info. `status` arguments keep only subscriptions in those statuses.
extension ReceiptService {
    func storeSubscriptionStatuses(_ request: HTTPRequest, bundleID: String, transactionID: String)
        throws(ServiceError) -> HTTPResponse
    {
        let signing = try storeAPISignedData(bundleID: bundleID)
        var wanted: Set<Int64> = []
        for (name, value) in request.query where name == "status" {
            guard let status = Int64(value), (1...5).contains(status) else {
                throw .apple(400, 4_000_031, "Invalid status: \"\(value)\" (1 to 5)")
            }
            wanted.insert(status)
        }
        let customerID = try storeAPICustomer(of: transactionID, bundleID: bundleID)
        let transactions = try storeAPILedger { () throws(LedgerError) in
            try ledger.transactions(customerID: customerID, bundleID: bundleID)
        }
        var latest: [String: LedgerTransaction] = [:]
        var groups: [(group: String, originals: [String])] = []
        for transaction in transactions {
            let purchase = transaction.purchase
            guard let group = signing.subscriptionGroup(purchase.productID), purchase.expiresDate != nil else {
                continue
            }
            let original = purchase.originalTransactionID ?? purchase.transactionID
            if let index = groups.firstIndex(where: { $0.group == group }) {
                if !groups[index].originals.contains(original) { groups[index].originals.append(original) }
            } else {
                groups.append((group, [original]))
            }
            if let stored = latest[original], let storedExpiry = stored.purchase.expiresDate,
                let expiry = purchase.expiresDate, expiry < storedExpiry
            {
                continue
            }
            latest[original] = transaction
        }
        let originals = groups.flatMap(\.originals)
        let renewals = try storeAPILedger { () throws(LedgerError) in
            try ledger.renewalInfo(originalTransactionIDs: originals)
        }
        var data: [JSONValue] = []
        for (group, members) in groups {
            var last: [JSONValue] = []
            for original in members {
                guard let transaction = latest[original] else { continue }
                let renewal = renewals.first { $0.originalTransactionID == original }
                let status = signing.status(latest: transaction, renewal: renewal)
                guard wanted.isEmpty || wanted.contains(status) else { continue }
                last.append(
                    .object(
                        JSONObject([
                            "originalTransactionId": .string(original),
                            "status": .integer(status),
                            "signedTransactionInfo": .string(try signing.sign(signing.transactionPayload(transaction))),
                            "signedRenewalInfo": .string(
                                try signing.sign(signing.renewalPayload(latest: transaction, renewal: renewal))),
                        ])))
            }
            guard !last.isEmpty else { continue }
            data.append(
                .object(
                    JSONObject(["subscriptionGroupIdentifier": .string(group), "lastTransactions": .array(last)])))
        }
        return .json(
            JSONObject([
                "environment": .string(signing.environment.rawValue),
                "bundleId": .string(bundleID),
                "appAppleId": .integer(signing.app.appAppleID),
                "data": .array(data),
            ]))
    }
}
