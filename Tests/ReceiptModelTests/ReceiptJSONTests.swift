import ReceiptModel
import StrictJSON
import Testing
import ZoneInfo

/// 2024-06-05T12:00:00Z.
private let june5Noon: Int64 = 1_717_588_800_000

private func readReceipt(_ text: String, extraKeys: Set<String> = []) throws -> Receipt {
    try Receipt(json: JSONValue(parsing: text), extraKeys: extraKeys)
}

/// The error reading `text` as a receipt gives; records an issue at the caller when there is none.
private func readError(
    _ text: String,
    extraKeys: Set<String> = [],
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ReceiptJSONError? {
    let json = try JSONValue(parsing: text)
    return #expect(throws: ReceiptJSONError.self, sourceLocation: sourceLocation) {
        try Receipt(json: json, extraKeys: extraKeys)
    }
}

/// A JSON document that must be rejected, and the key path the error must name.
struct JSONCase: Sendable, CustomTestStringConvertible {
    let name: String
    let json: String
    let path: String

    var testDescription: String { name }
}

@Suite("Receipt JSON: verifyReceipt output")
struct VerifyReceiptJSONOutputTests {
    static let receipt = Receipt(
        bundleID: "com.example.app",
        creationDate: ReceiptDate(millisecondsSince1970: june5Noon),
        receiptType: "Production",
        appItemID: 1_234_567_890,
        applicationVersion: "42.1",
        originalApplicationVersion: "1.0",
        originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_500_000_000_000),
        expirationDate: ReceiptDate(millisecondsSince1970: 1_749_124_800_000),
        versionExternalIdentifier: 987_654_321,
        downloadID: 0,
        opaqueValue: [0x01, 0x02, 0x03],
        sha1Hash: Array(repeating: 0xAB, count: 20),
        inAppPurchases: [
            InAppPurchase(
                productID: "com.example.pro.monthly",
                transactionID: "2000000123357229",
                purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_230_600_250),
                quantity: 1,
                originalTransactionID: "2000000100000001",
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_714_545_000_000),
                productType: 2,
                expiresDate: ReceiptDate(millisecondsSince1970: 1_719_822_600_000),
                webOrderLineItemID: 2_000_000_012_345_678,
                cancellationDate: ReceiptDate(millisecondsSince1970: 1_717_406_100_000),
                isTrialPeriod: false,
                isInIntroOfferPeriod: true,
                promotionalOfferID: "launch",
                unknownAttributes: [ReceiptAttribute(type: 1710, version: 1, value: [0x00])]
            ),
            InAppPurchase(
                productID: "com.example.coins", transactionID: "2000000123357230",
                purchaseDate: ReceiptDate(millisecondsSince1970: june5Noon), quantity: 5),
        ],
        unknownAttributes: [ReceiptAttribute(type: 8, version: 1, value: [0x00])]
    )

    @Test("every field is rendered with Apple's keys, in Apple's order and string conventions")
    func exactDocument() {
        let expected = """
            {
              "receipt_type": "Production",
              "adam_id": 1234567890,
              "app_item_id": 1234567890,
              "bundle_id": "com.example.app",
              "application_version": "42.1",
              "download_id": 0,
              "version_external_identifier": 987654321,
              "receipt_creation_date": "2024-06-05 12:00:00 Etc/GMT",
              "receipt_creation_date_ms": "1717588800000",
              "original_purchase_date": "2017-07-14 02:40:00 Etc/GMT",
              "original_purchase_date_ms": "1500000000000",
              "original_application_version": "1.0",
              "expiration_date": "2025-06-05 12:00:00 Etc/GMT",
              "expiration_date_ms": "1749124800000",
              "in_app": [
                {
                  "quantity": "1",
                  "product_id": "com.example.pro.monthly",
                  "transaction_id": "2000000123357229",
                  "original_transaction_id": "2000000100000001",
                  "purchase_date": "2024-06-01 08:30:00 Etc/GMT",
                  "purchase_date_ms": "1717230600250",
                  "original_purchase_date": "2024-05-01 06:30:00 Etc/GMT",
                  "original_purchase_date_ms": "1714545000000",
                  "expires_date": "2024-07-01 08:30:00 Etc/GMT",
                  "expires_date_ms": "1719822600000",
                  "cancellation_date": "2024-06-03 09:15:00 Etc/GMT",
                  "cancellation_date_ms": "1717406100000",
                  "web_order_line_item_id": "2000000012345678",
                  "is_trial_period": "false",
                  "is_in_intro_offer_period": "true",
                  "promotional_offer_id": "launch"
                },
                {
                  "quantity": "5",
                  "product_id": "com.example.coins",
                  "transaction_id": "2000000123357230",
                  "purchase_date": "2024-06-05 12:00:00 Etc/GMT",
                  "purchase_date_ms": "1717588800000"
                }
              ]
            }
            """
        #expect(JSONValue.object(Self.receipt.verifyReceiptJSON).serialized(pretty: true) == expected)
    }

    @Test("absent fields are omitted and in_app is present even when empty")
    func minimalDocument() {
        let expected =
            #"{"bundle_id":"com.example.app","receipt_creation_date":"2024-06-05 12:00:00 Etc/GMT","#
            + #""receipt_creation_date_ms":"1717588800000","in_app":[]}"#
        #expect(JSONValue.object(Sample.minimalReceipt.verifyReceiptJSON).serialized() == expected)
    }

    @Test(
        "written as members are added, verifyReceipt's object has its tree's bytes, with and without Pacific time")
    func writtenWithoutTree() throws {
        let zone = try #require(PacificTimeTests.pacific)
        let request = ReceiptDate(millisecondsSince1970: 1_595_440_486_402)
        for receipt in [Self.receipt, Sample.minimalReceipt] {
            for (pacific, requestDate) in [(nil, nil), (zone, request), (zone, nil)] as [(TimeZoneRules?, ReceiptDate?)]
            {
                var written: [UInt8] = []
                JSONObjectWriter.write(to: &written) {
                    receipt.addVerifyReceiptJSON(to: &$0, pacificTime: pacific, requestDate: requestDate)
                }
                let tree = receipt.verifyReceiptJSON(pacificTime: pacific, requestDate: requestDate)
                #expect(written == JSONValue.object(tree).serializedBytes())
            }
        }
    }

    @Test("a purchase without a quantity has no quantity key")
    func purchaseWithoutQuantity() {
        #expect(
            JSONValue.object(Sample.minimalPurchase.verifyReceiptJSON).serialized()
                == #"{"product_id":"com.example.pro","transaction_id":"2000000123357229","#
                + #""purchase_date":"2024-06-01 08:30:00 Etc/GMT","purchase_date_ms":"1717230600000"}"#)
    }

    @Test("a date before 1970 has a negative _ms")
    func negativeMilliseconds() {
        let receipt = Receipt(bundleID: "b", creationDate: ReceiptDate(millisecondsSince1970: -1))
        #expect(receipt.verifyReceiptJSON["receipt_creation_date"] == .string("1969-12-31 23:59:59 Etc/GMT"))
        #expect(receipt.verifyReceiptJSON["receipt_creation_date_ms"] == .string("-1"))
    }

    @Test(
        "numbers written as strings are their decimal text: quantity, web_order_line_item_id and _ms, at every length",
        arguments: [0, 1, 9, 10, 99, 100, 12_345, 86_400_001, 1_717_588_800_000, 9_007_199_254_740_993, Int64.max])
    func decimalStrings(value: Int64) throws {
        for number in value == 0 ? [0] : [value, -value] {
            // _ms only for instants within years 0000-9999.
            let instant = abs(number) < 253_402_300_800_000 ? number : 0
            let purchase = InAppPurchase(
                productID: "p", transactionID: "t", purchaseDate: ReceiptDate(millisecondsSince1970: instant),
                quantity: number, webOrderLineItemID: number)
            var written: [UInt8] = []
            JSONObjectWriter.write(to: &written) { purchase.addVerifyReceiptJSON(to: &$0, pacificTime: nil) }
            let object = try JSONValue(parsing: written)
            #expect(object["quantity"] == .string(String(number)))
            #expect(object["web_order_line_item_id"] == .string(String(number)))
            #expect(object["purchase_date_ms"] == .string(String(instant)))
        }
    }
}

@Suite("Receipt JSON: reading")
struct ReceiptJSONReadingTests {
    @Test(
        "a date may be RFC 3339, Apple's format, or _ms as a number or a string",
        arguments: [
            (#""receipt_creation_date": "2024-06-05T12:00:00Z""#, june5Noon),
            (#""receipt_creation_date": "2024-06-05 12:00:00 Etc/GMT""#, june5Noon),
            (#""receipt_creation_date": "2024-06-05T14:00:00.250+02:00""#, june5Noon + 250),
            (#""receipt_creation_date_ms": 1717588800250"#, june5Noon + 250),
            (#""receipt_creation_date_ms": "1717588800250""#, june5Noon + 250),
            (#""receipt_creation_date_ms": -1"#, -1),
            (#""receipt_creation_date": "", "receipt_creation_date_ms": "1717588800000""#, june5Noon),
            (#""receipt_creation_date": null, "receipt_creation_date_ms": 1717588800000"#, june5Noon),
        ])
    func dateForms(members: String, milliseconds: Int64) throws {
        let receipt = try readReceipt(#"{"bundle_id": "com.example.app", "# + members + "}")
        #expect(receipt.creationDate.millisecondsSince1970 == milliseconds)
    }

    @Test(
        "a date given twice is accepted when both forms agree",
        arguments: [
            (#""2024-06-05T12:00:00Z""#, #""1717588800000""#, june5Noon),
            (#""2024-06-05T12:00:00.250Z""#, "1717588800250", june5Noon + 250),
            // Apple's format has whole seconds; its _ms twin carries the milliseconds.
            (#""2024-06-05 12:00:00 Etc/GMT""#, #""1717588800250""#, june5Noon + 250),
            (#""2024-06-05T12:00:00Z""#, "1717588800999", june5Noon + 999),
            // Before 1970 the second of -1 ms is 23:59:59, not 00:00:00.
            (#""1969-12-31 23:59:59 Etc/GMT""#, "-1", -1),
        ])
    func agreeingPair(text: String, milliseconds: String, expected: Int64) throws {
        let receipt = try readReceipt(
            #"{"bundle_id": "b", "receipt_creation_date": "# + text + #", "receipt_creation_date_ms": "#
                + milliseconds + "}")
        #expect(receipt.creationDate.millisecondsSince1970 == expected)
    }

    @Test(
        "a date given twice is rejected when the forms disagree",
        arguments: [
            (#""2024-06-05T12:00:00Z""#, "1717588801000"),
            (#""2024-06-05T12:00:00Z""#, "1717588799999"),
            (#""2024-06-05T12:00:00.250Z""#, "1717588800000"),
            (#""2024-06-05T12:00:00.250Z""#, "1717588800999"),
            (#""2024-06-05 12:00:00 Etc/GMT""#, #""1717588801000""#),
            (#""1970-01-01 00:00:00 Etc/GMT""#, "-1"),
        ])
    func disagreeingPair(text: String, milliseconds: String) throws {
        let error = try readError(
            #"{"bundle_id": "b", "receipt_creation_date": "# + text + #", "receipt_creation_date_ms": "#
                + milliseconds + "}")
        #expect(
            error == ReceiptJSONError(path: "receipt_creation_date", rule: "disagrees with receipt_creation_date_ms"))
    }

    @Test("a disagreeing pair inside a purchase names the purchase")
    func disagreeingPairInPurchase() throws {
        let error = try readError(
            #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00Z", "in_app": [{"product_id": "p", "#
                + #""transaction_id": "1", "purchase_date": "2024-06-01T08:30:00Z", "purchase_date_ms": 0}]}"#)
        #expect(error == ReceiptJSONError(path: "in_app[0].purchase_date", rule: "disagrees with purchase_date_ms"))
    }

    @Test("a purchase reads every field, with integers and flags as numbers, booleans or strings")
    func purchaseFields() throws {
        let receipt = try readReceipt(
            """
            {
              "bundle_id": "com.example.app",
              "receipt_creation_date": "2024-06-05T12:00:00Z",
              "receipt_type": "ProductionSandbox",
              "app_item_id": "1234567890",
              "application_version": "42.1",
              "original_application_version": "1.0",
              "original_purchase_date_ms": 1500000000000,
              "expiration_date": "2025-06-05 12:00:00 Etc/GMT",
              "version_external_identifier": 987654321,
              "in_app": [{
                "quantity": 3,
                "product_id": "com.example.pro",
                "transaction_id": "2000000123357229",
                "original_transaction_id": "2000000100000001",
                "purchase_date": "2024-06-01T08:30:00Z",
                "original_purchase_date_ms": "1714545000000",
                "expires_date": "2024-07-01T08:30:00Z",
                "web_order_line_item_id": "2000000012345678",
                "cancellation_date": "2024-06-03 09:15:00 Etc/GMT",
                "is_trial_period": "true",
                "is_in_intro_offer_period": false,
                "promotional_offer_id": "launch"
              }]
            }
            """)
        let expected = Receipt(
            bundleID: "com.example.app",
            creationDate: ReceiptDate(millisecondsSince1970: june5Noon),
            receiptType: "ProductionSandbox",
            appItemID: 1_234_567_890,
            applicationVersion: "42.1",
            originalApplicationVersion: "1.0",
            originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_500_000_000_000),
            expirationDate: ReceiptDate(millisecondsSince1970: 1_749_124_800_000),
            versionExternalIdentifier: 987_654_321,
            inAppPurchases: [
                InAppPurchase(
                    productID: "com.example.pro",
                    transactionID: "2000000123357229",
                    purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_230_600_000),
                    quantity: 3,
                    originalTransactionID: "2000000100000001",
                    originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_714_545_000_000),
                    expiresDate: ReceiptDate(millisecondsSince1970: 1_719_822_600_000),
                    webOrderLineItemID: 2_000_000_012_345_678,
                    cancellationDate: ReceiptDate(millisecondsSince1970: 1_717_406_100_000),
                    isTrialPeriod: true,
                    isInIntroOfferPeriod: false,
                    promotionalOfferID: "launch"
                )
            ]
        )
        #expect(receipt == expected)
    }

    @Test("quantity defaults to 1")
    func quantityDefault() throws {
        let receipt = try readReceipt(
            #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00Z", "in_app": [{"product_id": "p", "#
                + #""transaction_id": "1", "purchase_date": "2024-06-01T08:30:00Z"}]}"#)
        #expect(receipt.inAppPurchases.first?.quantity == 1)
    }

    @Test("null members count as absent")
    func nullIsAbsent() throws {
        let receipt = try readReceipt(
            #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00Z", "receipt_type": null, "#
                + #""app_item_id": null, "in_app": null}"#)
        #expect(receipt == Receipt(bundleID: "b", creationDate: ReceiptDate(millisecondsSince1970: june5Noon)))
    }

    @Test("a key the caller names in extraKeys is allowed, and only then")
    func extraKeys() throws {
        let text = #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00Z", "device_id": "x"}"#
        #expect(try readReceipt(text, extraKeys: ["device_id"]).bundleID == "b")
        let error = try readError(text)
        #expect(error?.path == "device_id")
        #expect(
            error?.rule.hasPrefix("is not a known key (known: adam_id, app_item_id, application_version, bundle_id,")
                == true)
    }

    @Test("download_id and adam_id are read as Apple prints them; adam_id stands for app_item_id")
    func appleIdentifiers() throws {
        let both = try readReceipt(document(#", "adam_id": 0, "app_item_id": 0, "download_id": 0"#))
        #expect(both.appItemID == 0)
        #expect(both.downloadID == 0)
        #expect(try readReceipt(document(#", "adam_id": "690661663""#)).appItemID == 690_661_663)
    }

    @Test("an adam_id that disagrees with app_item_id is refused")
    func adamIDDisagrees() throws {
        let error = try readError(document(#", "adam_id": 1, "app_item_id": 2"#))
        #expect(error?.path == "adam_id")
    }

    @Test("a receipt with whole-second dates survives verifyReceiptJSON and reading back")
    func roundTrip() throws {
        var receipt = VerifyReceiptJSONOutputTests.receipt
        // Fields verifyReceipt does not show cannot come back.
        receipt.opaqueValue = nil
        receipt.sha1Hash = nil
        receipt.unknownAttributes = []
        receipt.inAppPurchases[0].productType = nil
        receipt.inAppPurchases[0].unknownAttributes = []
        receipt.inAppPurchases[0].purchaseDate = ReceiptDate(millisecondsSince1970: 1_717_230_600_000)
        #expect(try Receipt(json: .object(receipt.verifyReceiptJSON)) == receipt)
    }

    @Test("milliseconds survive the round trip through the _ms twins")
    func roundTripMilliseconds() throws {
        let receipt = Receipt(
            bundleID: "b", creationDate: ReceiptDate(millisecondsSince1970: june5Noon + 250),
            inAppPurchases: [
                InAppPurchase(productID: "p", transactionID: "1", purchaseDate: ReceiptDate(millisecondsSince1970: -1))
            ])
        #expect(try Receipt(json: .object(receipt.verifyReceiptJSON)) == receipt)
    }
}

/// A purchase object with its required members, left open for more.
private let openPurchase = #"{"product_id": "p", "transaction_id": "1", "purchase_date": "2024-06-01T08:30:00Z""#

/// A receipt with the required members and `members` added, and with one purchase carrying `purchaseMembers` too.
private func document(_ members: String = "", purchase purchaseMembers: String? = nil) -> String {
    var text = #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00Z""# + members
    if let purchaseMembers { text += #", "in_app": ["# + openPurchase + purchaseMembers + "}]" }
    return text + "}"
}

@Suite("Receipt JSON: rejections")
struct ReceiptJSONRejectionTests {
    @Test("an unknown key is rejected with its path")
    func unknownKeys() throws {
        #expect(try readError(document(#", "bundle_identifier": "b""#))?.path == "bundle_identifier")
        #expect(try readError(document(#", "opaque_value": "AQID""#))?.path == "opaque_value")
        let typo = document(#", "in_app": ["# + openPurchase + "}, " + openPurchase + #", "purchse_date": "x"}]"#)
        let error = try readError(typo)
        #expect(error?.path == "in_app[1].purchse_date")
        #expect(error?.rule.contains("is not a known key (known: cancellation_date, cancellation_date_ms,") == true)
    }

    @Test("extraKeys apply to the receipt, not to its purchases")
    func extraKeysNotInPurchases() throws {
        let text = document(purchase: #", "device_id": "x""#)
        #expect(try readError(text, extraKeys: ["device_id"])?.path == "in_app[0].device_id")
    }

    static let missing: [JSONCase] = [
        JSONCase(name: "no bundle_id", json: #"{"receipt_creation_date": "2024-06-05T12:00:00Z"}"#, path: "bundle_id"),
        JSONCase(
            name: "empty bundle_id", json: #"{"bundle_id": "", "receipt_creation_date": "2024-06-05T12:00:00Z"}"#,
            path: "bundle_id"),
        JSONCase(
            name: "null bundle_id", json: #"{"bundle_id": null, "receipt_creation_date": "2024-06-05T12:00:00Z"}"#,
            path: "bundle_id"),
        JSONCase(name: "no creation date", json: #"{"bundle_id": "b"}"#, path: "receipt_creation_date"),
        JSONCase(
            name: "empty creation date", json: #"{"bundle_id": "b", "receipt_creation_date": ""}"#,
            path: "receipt_creation_date"),
        JSONCase(
            name: "no product_id",
            json: document(#", "in_app": [{"transaction_id": "1", "purchase_date": "2024-06-01T08:30:00Z"}]"#),
            path: "in_app[0].product_id"),
        JSONCase(
            name: "no transaction_id",
            json: document(#", "in_app": [{"product_id": "p", "purchase_date": "2024-06-01T08:30:00Z"}]"#),
            path: "in_app[0].transaction_id"),
        JSONCase(
            name: "no purchase_date",
            json: document(#", "in_app": [{"product_id": "p", "transaction_id": "1"}]"#),
            path: "in_app[0].purchase_date"),
        JSONCase(name: "an empty purchase", json: document(#", "in_app": [{}]"#), path: "in_app[0].purchase_date"),
    ]

    @Test("a missing required field is rejected with its path", arguments: missing)
    func missingField(testCase: JSONCase) throws {
        #expect(try readError(testCase.json)?.path == testCase.path)
    }

    static let badDates: [JSONCase] = [
        JSONCase(
            name: "February 30th", json: #"{"bundle_id": "b", "receipt_creation_date": "2024-02-30T00:00:00Z"}"#,
            path: "receipt_creation_date"),
        JSONCase(
            name: "a date without time", json: #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05"}"#,
            path: "receipt_creation_date"),
        JSONCase(
            name: "no offset", json: #"{"bundle_id": "b", "receipt_creation_date": "2024-06-05T12:00:00"}"#,
            path: "receipt_creation_date"),
        JSONCase(
            name: "milliseconds under the text key",
            json: #"{"bundle_id": "b", "receipt_creation_date": "1717588800000"}"#, path: "receipt_creation_date"),
        JSONCase(
            name: "a number under the text key", json: #"{"bundle_id": "b", "receipt_creation_date": 1717588800000}"#,
            path: "receipt_creation_date"),
        JSONCase(
            name: "_ms with a fraction", json: #"{"bundle_id": "b", "receipt_creation_date_ms": 1717588800000.5}"#,
            path: "receipt_creation_date_ms"),
        JSONCase(
            name: "_ms with an exponent", json: #"{"bundle_id": "b", "receipt_creation_date_ms": 1.7e12}"#,
            path: "receipt_creation_date_ms"),
        JSONCase(
            name: "_ms after year 9999", json: #"{"bundle_id": "b", "receipt_creation_date_ms": 253402300800000}"#,
            path: "receipt_creation_date_ms"),
        JSONCase(
            name: "_ms before year 0000", json: #"{"bundle_id": "b", "receipt_creation_date_ms": "-62167219200001"}"#,
            path: "receipt_creation_date_ms"),
        JSONCase(
            name: "_ms as a boolean", json: #"{"bundle_id": "b", "receipt_creation_date_ms": true}"#,
            path: "receipt_creation_date_ms"),
        JSONCase(
            name: "a bad expires date in a purchase", json: document(purchase: #", "expires_date": "tomorrow""#),
            path: "in_app[0].expires_date"),
    ]

    @Test("a date that is not a date is rejected with its path", arguments: badDates)
    func badDate(testCase: JSONCase) throws {
        #expect(try readError(testCase.json)?.path == testCase.path)
    }

    static let badIntegers: [JSONCase] = [
        JSONCase(name: "a fraction", json: document(#", "app_item_id": 1.5"#), path: "app_item_id"),
        JSONCase(name: "a zero fraction", json: document(#", "app_item_id": 1.0"#), path: "app_item_id"),
        JSONCase(name: "an exponent", json: document(#", "app_item_id": 1e3"#), path: "app_item_id"),
        JSONCase(name: "beyond 64 bits", json: document(#", "app_item_id": 9223372036854775808"#), path: "app_item_id"),
        JSONCase(name: "a string with a letter", json: document(#", "app_item_id": "12a""#), path: "app_item_id"),
        JSONCase(name: "a string with a plus sign", json: document(#", "app_item_id": "+5""#), path: "app_item_id"),
        JSONCase(name: "a string with spaces", json: document(#", "app_item_id": " 5""#), path: "app_item_id"),
        JSONCase(
            name: "an empty string", json: document(#", "version_external_identifier": """#),
            path: "version_external_identifier"),
        JSONCase(
            name: "a negative quantity", json: document(purchase: #", "quantity": -1"#), path: "in_app[0].quantity"),
        JSONCase(
            name: "a fractional web order line item id", json: document(purchase: #", "web_order_line_item_id": 1.5"#),
            path: "in_app[0].web_order_line_item_id"),
    ]

    @Test("an integer field rejects anything but a 64-bit integer", arguments: badIntegers)
    func badInteger(testCase: JSONCase) throws {
        #expect(try readError(testCase.json)?.path == testCase.path)
    }

    static let wrongTypes: [JSONCase] = [
        JSONCase(name: "the document is an array", json: "[]", path: ""),
        JSONCase(name: "the document is a string", json: #""receipt""#, path: ""),
        JSONCase(
            name: "bundle_id is a number", json: #"{"bundle_id": 42, "receipt_creation_date": "2024-06-05T12:00:00Z"}"#,
            path: "bundle_id"),
        JSONCase(name: "receipt_type is a boolean", json: document(#", "receipt_type": true"#), path: "receipt_type"),
        JSONCase(name: "app_item_id is an array", json: document(#", "app_item_id": []"#), path: "app_item_id"),
        JSONCase(name: "in_app is an object", json: document(#", "in_app": {}"#), path: "in_app"),
        JSONCase(name: "a purchase is a number", json: document(#", "in_app": [1]"#), path: "in_app[0]"),
        JSONCase(
            name: "the second purchase is a string", json: document(#", "in_app": ["# + openPurchase + #"}, "p"]"#),
            path: "in_app[1]"),
        JSONCase(
            name: "product_id is a number",
            json: document(
                #", "in_app": [{"product_id": 1, "transaction_id": "1", "purchase_date": "2024-06-01T08:30:00Z"}]"#),
            path: "in_app[0].product_id"),
        JSONCase(
            name: "is_trial_period is \"yes\"", json: document(purchase: #", "is_trial_period": "yes""#),
            path: "in_app[0].is_trial_period"),
        JSONCase(
            name: "is_trial_period is 1", json: document(purchase: #", "is_trial_period": 1"#),
            path: "in_app[0].is_trial_period"),
        JSONCase(
            name: "is_in_intro_offer_period is \"True\"",
            json: document(purchase: #", "is_in_intro_offer_period": "True""#),
            path: "in_app[0].is_in_intro_offer_period"),
    ]

    @Test("a member of the wrong JSON type is rejected with its path", arguments: wrongTypes)
    func wrongType(testCase: JSONCase) throws {
        #expect(try readError(testCase.json)?.path == testCase.path)
    }
}
