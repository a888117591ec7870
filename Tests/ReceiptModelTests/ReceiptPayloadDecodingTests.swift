import ReceiptDER
import ReceiptModel
import Testing

/// A hand-built payload and where the decoder must say the problem is.
struct PayloadCase: Sendable, CustomTestStringConvertible {
    let name: String
    let attributes: [[UInt8]]
    var location: String? = nil

    var testDescription: String { name }
}

private func expectedReceipt(_ change: (inout Receipt) -> Void) -> Receipt {
    var receipt = Sample.minimalReceipt
    change(&receipt)
    return receipt
}

private func expectedPurchase(_ change: (inout InAppPurchase) -> Void) -> InAppPurchase {
    var purchase = Sample.minimalPurchase
    change(&purchase)
    return purchase
}

private let twentyBytes: [UInt8] = Array(0..<20)

@Suite("Receipt payload decoding: fields")
struct ReceiptPayloadFieldTests {
    @Test("a receipt with only bundle id (2) and creation date (12) decodes")
    func minimalReceipt() throws {
        #expect(try decodePayload(Sample.requiredAttributes) == Sample.minimalReceipt)
    }

    @Test(
        "each documented app field decodes into its typed property",
        arguments: [
            (
                ReceiptField.receiptType, utf8String("ProductionSandbox"),
                expectedReceipt { $0.receiptType = "ProductionSandbox" }
            ),
            (.appItemID, integer(1_234_567_890), expectedReceipt { $0.appItemID = 1_234_567_890 }),
            (.applicationVersion, utf8String("42.1"), expectedReceipt { $0.applicationVersion = "42.1" }),
            (.opaqueValue, [0xDE, 0xAD, 0xBE, 0xEF], expectedReceipt { $0.opaqueValue = [0xDE, 0xAD, 0xBE, 0xEF] }),
            (.sha1Hash, twentyBytes, expectedReceipt { $0.sha1Hash = twentyBytes }),
            (
                .versionExternalIdentifier, integer(987_654_321),
                expectedReceipt { $0.versionExternalIdentifier = 987_654_321 }
            ),
            (
                .originalPurchaseDate, ia5String("2017-07-14T02:40:00Z"),
                expectedReceipt { $0.originalPurchaseDate = ReceiptDate(millisecondsSince1970: 1_500_000_000_000) }
            ),
            (.originalApplicationVersion, utf8String("1.0"), expectedReceipt { $0.originalApplicationVersion = "1.0" }),
            (
                .expirationDate, ia5String("2025-06-05T12:00:00Z"),
                expectedReceipt { $0.expirationDate = ReceiptDate(millisecondsSince1970: 1_749_124_800_000) }
            ),
        ])
    func appField(field: ReceiptField, value: [UInt8], expected: Receipt) throws {
        #expect(try decodePayload(Sample.requiredAttributes + [attribute(field, value)]) == expected)
    }

    @Test("a purchase with only product id, transaction id and purchase date decodes, without a quantity")
    func minimalPurchase() throws {
        let decoded = try decodePayload(Sample.requiredAttributes + [purchase(Sample.requiredPurchaseAttributes)])
        #expect(decoded.inAppPurchases == [Sample.minimalPurchase])
        #expect(decoded.inAppPurchases.first?.quantity == nil)
    }

    @Test(
        "each documented purchase field decodes into its typed property",
        arguments: [
            (InAppPurchaseField.quantity, integer(3), expectedPurchase { $0.quantity = 3 }),
            (.quantity, integer(0), expectedPurchase { $0.quantity = 0 }),
            (
                .originalTransactionID, utf8String("1000000000000001"),
                expectedPurchase { $0.originalTransactionID = "1000000000000001" }
            ),
            (
                .originalPurchaseDate, ia5String("2024-05-01T08:30:00.5+02:00"),
                expectedPurchase { $0.originalPurchaseDate = ReceiptDate(millisecondsSince1970: 1_714_545_000_500) }
            ),
            (.productType, integer(2), expectedPurchase { $0.productType = 2 }),
            (
                .expiresDate, ia5String("2024-07-01T08:30:00Z"),
                expectedPurchase { $0.expiresDate = ReceiptDate(millisecondsSince1970: 1_719_822_600_000) }
            ),
            (
                .webOrderLineItemID, integer(2_000_000_012_345_678),
                expectedPurchase { $0.webOrderLineItemID = 2_000_000_012_345_678 }
            ),
            (
                .cancellationDate, ia5String("2024-06-03T09:15:00Z"),
                expectedPurchase { $0.cancellationDate = ReceiptDate(millisecondsSince1970: 1_717_406_100_000) }
            ),
            (.isTrialPeriod, integer(1), expectedPurchase { $0.isTrialPeriod = true }),
            (.isTrialPeriod, integer(0), expectedPurchase { $0.isTrialPeriod = false }),
            (.isInIntroOfferPeriod, integer(1), expectedPurchase { $0.isInIntroOfferPeriod = true }),
            (.isInIntroOfferPeriod, integer(0), expectedPurchase { $0.isInIntroOfferPeriod = false }),
            (
                .promotionalOfferID, utf8String("launch-offer"),
                expectedPurchase { $0.promotionalOfferID = "launch-offer" }
            ),
        ])
    func purchaseField(field: InAppPurchaseField, value: [UInt8], expected: InAppPurchase) throws {
        let attributes = Sample.requiredPurchaseAttributes + [purchaseAttribute(field, value)]
        #expect(try decodePayload(Sample.requiredAttributes + [purchase(attributes)]).inAppPurchases == [expected])
    }

    @Test("64-bit integers decode at both ends of their range")
    func integerRange() throws {
        let largest = try decodePayload(Sample.requiredAttributes + [attribute(.appItemID, integer(.max))])
        #expect(largest.appItemID == Int64.max)
        let smallest = try decodePayload(Sample.requiredAttributes + [attribute(.appItemID, integer(.min))])
        #expect(smallest.appItemID == Int64.min)
    }

    @Test("an empty date string means the date is absent")
    func emptyDateIsAbsent() throws {
        let attributes = Sample.requiredPurchaseAttributes + [purchaseAttribute(.expiresDate, ia5String(""))]
        let decoded = try decodePayload(
            Sample.requiredAttributes + [attribute(.originalPurchaseDate, ia5String("")), purchase(attributes)])
        #expect(decoded.originalPurchaseDate == nil)
        #expect(decoded.inAppPurchases.first?.expiresDate == nil)
    }

    @Test("UTF8String values keep non-ASCII text and may be empty")
    func utf8Text() throws {
        let decoded = try decodePayload([
            attribute(.bundleID, utf8String("com.exämple.日本")), Sample.creationDateAttribute,
            attribute(.applicationVersion, utf8String("")),
        ])
        #expect(decoded.bundleID == "com.exämple.日本")
        #expect(decoded.applicationVersion == "")
    }
}

@Suite("Receipt payload decoding: structure")
struct ReceiptPayloadStructureTests {
    @Test("undocumented app attributes are kept raw, with their version, in payload order")
    func unknownAppAttributes() throws {
        let decoded = try decodePayload([
            attribute(type: 8, version: 2, ia5String("2024-06-05T12:00:00Z")),
            Sample.bundleIDAttribute,
            attribute(type: 25, version: 0, [0xFF, 0x00]),
            Sample.creationDateAttribute,
            attribute(type: 8, version: 1, []),
            attribute(type: -3, version: -1, integer(7)),
            attribute(type: 1_000_000, version: 1, [0x30, 0x80]),
        ])
        #expect(
            decoded.unknownAttributes == [
                ReceiptAttribute(type: 8, version: 2, value: ia5String("2024-06-05T12:00:00Z")),
                ReceiptAttribute(type: 25, version: 0, value: [0xFF, 0x00]),
                ReceiptAttribute(type: 8, version: 1, value: []),
                ReceiptAttribute(type: -3, version: -1, value: integer(7)),
                ReceiptAttribute(type: 1_000_000, version: 1, value: [0x30, 0x80]),
            ])
    }

    @Test("undocumented purchase attributes are kept raw in payload order, apart from the app's")
    func unknownPurchaseAttributes() throws {
        let attributes =
            [attribute(type: 1710, version: 3, [0x01])] + Sample.requiredPurchaseAttributes
            + [attribute(type: 1709, version: 1, utf8String("x")), attribute(type: 2, version: 1, [0x02])]
        let decoded = try decodePayload(Sample.requiredAttributes + [purchase(attributes)])
        #expect(decoded.unknownAttributes == [])
        #expect(
            decoded.inAppPurchases.first?.unknownAttributes == [
                ReceiptAttribute(type: 1710, version: 3, value: [0x01]),
                ReceiptAttribute(type: 1709, version: 1, value: utf8String("x")),
                ReceiptAttribute(type: 2, version: 1, value: [0x02]),
            ])
    }

    @Test("a decoded receipt equals, and hashes as, one given the same undocumented attributes as values")
    func unknownAttributesCompareAsValues() throws {
        let purchaseAttributes =
            Sample.requiredPurchaseAttributes + [attribute(type: 1714, version: 1, integer(-200))]
        let decoded = try decodePayload(
            Sample.requiredAttributes + [
                purchase(purchaseAttributes), attribute(type: 25, version: 3, [0x7F]),
                attribute(type: 1 << 40, version: -1, []),
            ])
        var given = decoded
        given.unknownAttributes = [
            ReceiptAttribute(type: 25, version: 3, value: [0x7F]),
            ReceiptAttribute(type: 1 << 40, version: -1, value: []),
        ]
        given.inAppPurchases[0].unknownAttributes = [ReceiptAttribute(type: 1714, version: 1, value: integer(-200))]
        #expect(given == decoded)
        #expect(given.hashValue == decoded.hashValue)
        given.inAppPurchases[0].unknownAttributes[0] = ReceiptAttribute(type: 1714, version: 2, value: integer(-200))
        #expect(given != decoded)
    }

    @Test("an undocumented attribute of more than 65,535 octets is kept whole")
    func longUnknownAttribute() throws {
        let value = [UInt8](repeating: 0xA5, count: 70_000)
        let decoded = try decodePayload(Sample.requiredAttributes + [attribute(type: 99, version: 1, value)])
        #expect(decoded.unknownAttributes == [ReceiptAttribute(type: 99, version: 1, value: value)])
    }

    @Test("the attribute version does not matter for documented fields")
    func versionIgnored() throws {
        let decoded = try decodePayload([
            attribute(type: 2, version: 0, utf8String(Sample.bundleID)),
            attribute(type: 12, version: 7, ia5String(Sample.creationText)),
        ])
        #expect(decoded == Sample.minimalReceipt)
    }

    @Test("attributes may come in any order, in the receipt and in a purchase")
    func orderIsFree() throws {
        let quantity = purchaseAttribute(.quantity, integer(1))
        let sorted = try decodePayload(
            [attribute(.receiptType, utf8String("Xcode"))] + Sample.requiredAttributes
                + [purchase([quantity] + Sample.requiredPurchaseAttributes)])
        let shuffled = try decodePayload([
            purchase(Sample.requiredPurchaseAttributes.reversed() + [quantity]),
            Sample.creationDateAttribute,
            attribute(.receiptType, utf8String("Xcode")),
            Sample.bundleIDAttribute,
        ])
        #expect(shuffled == sorted)
        #expect(shuffled.receiptType == "Xcode")
        #expect(shuffled.inAppPurchases.first?.quantity == 1)
    }

    @Test("several purchases are kept in payload order, even for the same product")
    func multiplePurchases() throws {
        func purchaseAttributes(_ transactionID: String) -> [UInt8] {
            purchase([
                purchaseAttribute(.productID, utf8String(Sample.productID)),
                purchaseAttribute(.transactionID, utf8String(transactionID)),
                purchaseAttribute(.purchaseDate, ia5String(Sample.purchaseText)),
            ])
        }
        let decoded = try decodePayload([
            purchaseAttributes("3"), Sample.bundleIDAttribute, purchaseAttributes("1"), Sample.creationDateAttribute,
            purchaseAttributes("2"),
        ])
        #expect(decoded.inAppPurchases.map(\.transactionID) == ["3", "1", "2"])
    }

    @Test("purchases that repeat or change the previous one's product, original transaction or date decode their own")
    func repeatedPurchaseValues() throws {
        func purchaseAttributes(_ product: String, _ original: String, _ originalDate: String) -> [UInt8] {
            purchase(
                Array(Sample.requiredPurchaseAttributes.dropFirst()) + [
                    purchaseAttribute(.productID, utf8String(product)),
                    purchaseAttribute(.originalTransactionID, utf8String(original)),
                    purchaseAttribute(.originalPurchaseDate, ia5String(originalDate)),
                ])
        }
        let decoded = try decodePayload(
            Sample.requiredAttributes + [
                purchaseAttributes("com.example.a", "1000", "2024-06-01T08:30:00Z"),
                purchaseAttributes("com.example.a", "1000", "2024-06-01T08:30:00Z"),
                purchaseAttributes("com.example.b", "1001", "2024-06-01T08:30:01Z"),
                purchaseAttributes("com.example.b", "1001", ""),
            ])
        let second = ReceiptDate(millisecondsSince1970: Sample.purchaseDate.millisecondsSince1970 + 1000)
        #expect(
            decoded.inAppPurchases.map(\.productID) == [
                "com.example.a", "com.example.a", "com.example.b", "com.example.b",
            ])
        #expect(decoded.inAppPurchases.map(\.originalTransactionID) == ["1000", "1000", "1001", "1001"])
        #expect(
            decoded.inAppPurchases.map(\.originalPurchaseDate) == [
                Sample.purchaseDate, Sample.purchaseDate, second, nil,
            ])
    }

    @Test("an empty payload SET lacks the bundle id")
    func emptySet() {
        #expect(throws: ReceiptPayloadError(.missingAttribute, at: "bundle_id (field 2)")) {
            try decodePayload([])
        }
    }

    @Test("a payload slice need not start at index 0")
    func sliceOffset() throws {
        let bytes = [0xAA, 0xBB] + setOf(Sample.requiredAttributes)
        #expect(try Receipt(payload: bytes[2...]) == Sample.minimalReceipt)
    }
}

@Suite("Receipt payload decoding: required and single-valued fields")
struct ReceiptPayloadCardinalityTests {
    static let duplicates: [PayloadCase] = [
        PayloadCase(
            name: "bundle id twice with the same value",
            attributes: Sample.requiredAttributes + [Sample.bundleIDAttribute], location: "bundle_id (field 2)"),
        PayloadCase(
            name: "bundle id twice with different values",
            attributes: Sample.requiredAttributes + [attribute(.bundleID, utf8String("com.example.other"))],
            location: "bundle_id (field 2)"),
        PayloadCase(
            name: "creation date twice",
            attributes: Sample.requiredAttributes + [attribute(.creationDate, ia5String("2024-06-06T12:00:00Z"))],
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "an empty creation date, then a real one",
            attributes: [attribute(.creationDate, ia5String(""))] + Sample.requiredAttributes,
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "app item id twice",
            attributes: Sample.requiredAttributes + [
                attribute(.appItemID, integer(1)), attribute(.appItemID, integer(1)),
            ],
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "opaque value twice",
            attributes: Sample.requiredAttributes + [attribute(.opaqueValue, [1]), attribute(.opaqueValue, [2])],
            location: "opaque_value (field 4)"),
        PayloadCase(
            name: "product id twice inside one purchase",
            attributes: Sample.requiredAttributes + [
                purchase(
                    Sample.requiredPurchaseAttributes + [purchaseAttribute(.productID, utf8String(Sample.productID))])
            ],
            location: "in_app[0].product_id (field 1702)"),
        PayloadCase(
            name: "is_trial_period twice inside the second purchase",
            attributes: Sample.requiredAttributes + [
                purchase(Sample.requiredPurchaseAttributes),
                purchase(
                    Sample.requiredPurchaseAttributes + [
                        purchaseAttribute(.isTrialPeriod, integer(0)), purchaseAttribute(.isTrialPeriod, integer(0)),
                    ]),
            ],
            location: "in_app[1].is_trial_period (field 1713)"),
    ]

    @Test("a single-valued field that appears twice is rejected, naming the field", arguments: duplicates)
    func duplicateAttribute(testCase: PayloadCase) {
        #expect(throws: ReceiptPayloadError(.duplicateAttribute, at: testCase.location)) {
            try decodePayload(testCase.attributes)
        }
    }

    static let missing: [PayloadCase] = [
        PayloadCase(name: "no bundle id", attributes: [Sample.creationDateAttribute], location: "bundle_id (field 2)"),
        PayloadCase(
            name: "no creation date", attributes: [Sample.bundleIDAttribute],
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "an empty creation date",
            attributes: [Sample.bundleIDAttribute, attribute(.creationDate, ia5String(""))],
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "a purchase without product id",
            attributes: Sample.requiredAttributes + [purchase(Array(Sample.requiredPurchaseAttributes[1...]))],
            location: "in_app[0].product_id (field 1702)"),
        PayloadCase(
            name: "a purchase without transaction id",
            attributes: Sample.requiredAttributes + [
                purchase([Sample.requiredPurchaseAttributes[0], Sample.requiredPurchaseAttributes[2]])
            ],
            location: "in_app[0].transaction_id (field 1703)"),
        PayloadCase(
            name: "a purchase without purchase date",
            attributes: Sample.requiredAttributes + [purchase(Array(Sample.requiredPurchaseAttributes[..<2]))],
            location: "in_app[0].purchase_date (field 1704)"),
        PayloadCase(
            name: "a second purchase with an empty purchase date",
            attributes: Sample.requiredAttributes + [
                purchase(Sample.requiredPurchaseAttributes),
                purchase(
                    Array(Sample.requiredPurchaseAttributes[..<2]) + [purchaseAttribute(.purchaseDate, ia5String(""))]),
            ],
            location: "in_app[1].purchase_date (field 1704)"),
        PayloadCase(
            name: "an empty purchase", attributes: Sample.requiredAttributes + [purchase([])],
            location: "in_app[0].product_id (field 1702)"),
    ]

    @Test("a required field that is absent is reported as missing, naming the field", arguments: missing)
    func missingAttribute(testCase: PayloadCase) {
        #expect(throws: ReceiptPayloadError(.missingAttribute, at: testCase.location)) {
            try decodePayload(testCase.attributes)
        }
    }

    @Test("at most maximumPurchases purchases are decoded")
    func purchaseLimit() throws {
        let purchases = Array(repeating: purchase(Sample.requiredPurchaseAttributes), count: 3)
        #expect(try decodePayload(Sample.requiredAttributes + purchases, maximumPurchases: 3).inAppPurchases.count == 3)
        #expect(throws: ReceiptPayloadError(.tooManyPurchases(limit: 2), at: nil)) {
            try decodePayload(Sample.requiredAttributes + purchases, maximumPurchases: 2)
        }
        #expect(throws: ReceiptPayloadError(.tooManyPurchases(limit: 0), at: nil)) {
            try decodePayload(Sample.requiredAttributes + purchases, maximumPurchases: 0)
        }
        #expect(try decodePayload(Sample.requiredAttributes, maximumPurchases: 0) == Sample.minimalReceipt)
    }
}

@Suite("Receipt payload decoding: field values")
struct ReceiptPayloadValueTests {
    private static func app(_ field: ReceiptField, _ value: [UInt8]) -> [[UInt8]] {
        switch field {
        case .bundleID: return [Sample.creationDateAttribute, attribute(field, value)]
        case .creationDate: return [Sample.bundleIDAttribute, attribute(field, value)]
        default: return Sample.requiredAttributes + [attribute(field, value)]
        }
    }

    private static func inPurchase(_ field: InAppPurchaseField, _ value: [UInt8]) -> [[UInt8]] {
        let required: [InAppPurchaseField] = [.productID, .transactionID, .purchaseDate]
        let kept = zip(required, Sample.requiredPurchaseAttributes).filter { $0.0 != field }.map(\.1)
        return Sample.requiredAttributes + [purchase(kept + [purchaseAttribute(field, value)])]
    }

    static let invalidValues: [PayloadCase] = [
        PayloadCase(
            name: "bundle id as an IA5String", attributes: app(.bundleID, ia5String(Sample.bundleID)),
            location: "bundle_id (field 2)"),
        PayloadCase(
            name: "bundle id as raw text", attributes: app(.bundleID, Array(Sample.bundleID.utf8)),
            location: "bundle_id (field 2)"),
        PayloadCase(name: "bundle id empty octets", attributes: app(.bundleID, []), location: "bundle_id (field 2)"),
        PayloadCase(
            name: "bundle id with invalid UTF-8", attributes: app(.bundleID, element(.utf8String, [0x61, 0xC3, 0x28])),
            location: "bundle_id (field 2)"),
        PayloadCase(
            name: "bundle id with bytes after the UTF8String",
            attributes: app(.bundleID, utf8String(Sample.bundleID) + [0x00]), location: "bundle_id (field 2)"),
        PayloadCase(
            name: "bundle id as a constructed UTF8String",
            attributes: app(.bundleID, element(ASN1Tag.utf8String.toggledForm, utf8String("a"))),
            location: "bundle_id (field 2)"),
        PayloadCase(
            name: "creation date as a UTF8String", attributes: app(.creationDate, utf8String(Sample.creationText)),
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "creation date as a GeneralizedTime",
            attributes: app(.creationDate, element(.generalizedTime, Array("20240605120000Z".utf8))),
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "an impossible date, February 30th",
            attributes: app(.creationDate, ia5String("2024-02-30T00:00:00Z")),
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "a date without offset", attributes: app(.expirationDate, ia5String("2024-06-05T12:00:00")),
            location: "expiration_date (field 21)"),
        PayloadCase(
            name: "a date in Apple's JSON format",
            attributes: app(.originalPurchaseDate, ia5String("2024-06-05 12:00:00 Etc/GMT")),
            location: "original_purchase_date (field 18)"),
        PayloadCase(
            name: "a date with non-ASCII bytes",
            attributes: app(.creationDate, element(.ia5String, [0x32, 0xC3, 0xA9])),
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "a date with bytes after the IA5String",
            attributes: app(.creationDate, ia5String(Sample.creationText) + [0x05, 0x00]),
            location: "receipt_creation_date (field 12)"),
        PayloadCase(
            name: "app item id as an OCTET STRING", attributes: app(.appItemID, element(.octetString, [0x01])),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "app item id over 64 bits",
            attributes: app(.appItemID, element(.integer, [0x01, 0, 0, 0, 0, 0, 0, 0, 0])),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "app item id below -2^63",
            attributes: app(.appItemID, element(.integer, [0xFF, 0x7F] + Array(repeating: 0xFF, count: 7))),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "app item id of 2^63",
            attributes: app(.appItemID, element(.integer, [0x00, 0x80, 0, 0, 0, 0, 0, 0, 0])),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "app item id not minimally encoded", attributes: app(.appItemID, element(.integer, [0x00, 0x01])),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "app item id empty INTEGER", attributes: app(.appItemID, element(.integer, [])),
            location: "app_item_id (field 1)"),
        PayloadCase(
            name: "version external identifier with bytes after the INTEGER",
            attributes: app(.versionExternalIdentifier, integer(5) + integer(6)),
            location: "version_external_identifier (field 16)"),
        PayloadCase(
            name: "sha1_hash of 19 bytes", attributes: app(.sha1Hash, Array(twentyBytes.dropLast())),
            location: "sha1_hash (field 5)"),
        PayloadCase(
            name: "sha1_hash of 21 bytes", attributes: app(.sha1Hash, twentyBytes + [0]),
            location: "sha1_hash (field 5)"),
        PayloadCase(name: "sha1_hash empty", attributes: app(.sha1Hash, []), location: "sha1_hash (field 5)"),
        PayloadCase(
            name: "quantity as a UTF8String", attributes: inPurchase(.quantity, utf8String("1")),
            location: "in_app[0].quantity (field 1701)"),
        PayloadCase(
            name: "negative quantity", attributes: inPurchase(.quantity, integer(-1)),
            location: "in_app[0].quantity (field 1701)"),
        PayloadCase(
            name: "is_trial_period of 2", attributes: inPurchase(.isTrialPeriod, integer(2)),
            location: "in_app[0].is_trial_period (field 1713)"),
        PayloadCase(
            name: "is_trial_period of -1", attributes: inPurchase(.isTrialPeriod, integer(-1)),
            location: "in_app[0].is_trial_period (field 1713)"),
        PayloadCase(
            name: "is_trial_period as a BOOLEAN", attributes: inPurchase(.isTrialPeriod, element(.boolean, [0xFF])),
            location: "in_app[0].is_trial_period (field 1713)"),
        PayloadCase(
            name: "is_in_intro_offer_period of 256", attributes: inPurchase(.isInIntroOfferPeriod, integer(256)),
            location: "in_app[0].is_in_intro_offer_period (field 1719)"),
        PayloadCase(
            name: "web order line item id over 64 bits",
            attributes: inPurchase(.webOrderLineItemID, element(.integer, [0x7F] + Array(repeating: 0xFF, count: 8))),
            location: "in_app[0].web_order_line_item_id (field 1711)"),
        PayloadCase(
            name: "product id as an IA5String", attributes: inPurchase(.productID, ia5String(Sample.productID)),
            location: "in_app[0].product_id (field 1702)"),
        PayloadCase(
            name: "transaction id with invalid UTF-8",
            attributes: inPurchase(.transactionID, element(.utf8String, [0xED, 0xA0, 0x80])),
            location: "in_app[0].transaction_id (field 1703)"),
        PayloadCase(
            name: "purchase date as a UTF8String",
            attributes: inPurchase(.purchaseDate, utf8String(Sample.purchaseText)),
            location: "in_app[0].purchase_date (field 1704)"),
        PayloadCase(
            name: "an impossible expires date",
            attributes: inPurchase(.expiresDate, ia5String("2023-02-29T00:00:00Z")),
            location: "in_app[0].expires_date (field 1708)"),
    ]

    @Test("a value without its documented encoding is rejected, naming the field", arguments: invalidValues)
    func invalidValue(testCase: PayloadCase) {
        let error = #expect(throws: ReceiptPayloadError.self) { try decodePayload(testCase.attributes) }
        #expect(error?.isInvalidValue == true, "\(String(describing: error))")
        #expect(error?.location == testCase.location)
    }
}

/// Bytes that are not a strict DER payload, and the rule they break.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let payload: [UInt8]
    let rule: DERError.Reason
    var location: String? = nil

    var testDescription: String { name }
}

@Suite("Receipt payload decoding: strict DER")
struct ReceiptPayloadDERTests {
    private static let content = Array(Sample.requiredAttributes.joined())

    /// `SEQUENCE` with the given elements, already encoded.
    private static func sequence(_ elements: [UInt8]...) -> [UInt8] { element(.sequence, Array(elements.joined())) }

    private static func payload(with bad: [UInt8]) -> [UInt8] { setOf(Sample.requiredAttributes + [bad]) }

    static let malformed: [MalformedCase] = [
        MalformedCase(name: "empty input", payload: [], rule: .truncated),
        MalformedCase(
            name: "trailing bytes after the SET", payload: setOf(Sample.requiredAttributes) + [0x00],
            rule: .trailingData),
        MalformedCase(
            name: "a second SET after the first", payload: setOf(Sample.requiredAttributes) + setOf([]),
            rule: .trailingData),
        MalformedCase(
            name: "a truncated SET", payload: Array(setOf(Sample.requiredAttributes).dropLast()), rule: .truncated),
        MalformedCase(
            name: "indefinite length", payload: [0x31, 0x80] + content + [0x00, 0x00],
            rule: .indefiniteLengthNotAllowed),
        MalformedCase(
            name: "a length in long form below 128", payload: [0x31, 0x81, UInt8(content.count)] + content,
            rule: .nonMinimalLength),
        MalformedCase(
            name: "a SEQUENCE instead of a SET", payload: element(.sequence, content),
            rule: .unexpectedTag(expected: .set, found: .sequence)),
        MalformedCase(
            name: "an attribute with an extra element",
            payload: payload(with: sequence(integer(99), integer(1), element(.octetString, []), integer(0))),
            rule: .trailingData),
        MalformedCase(
            name: "an attribute without a value", payload: payload(with: sequence(integer(99), integer(1))),
            rule: .truncated),
        MalformedCase(
            name: "an attribute whose value is not an OCTET STRING",
            payload: payload(with: sequence(integer(99), integer(1), utf8String("x"))),
            rule: .unexpectedTag(expected: .octetString, found: .utf8String)),
        MalformedCase(
            name: "an attribute value as a constructed OCTET STRING",
            payload: payload(
                with: sequence(
                    integer(99), integer(1), element(ASN1Tag.octetString.toggledForm, element(.octetString, [1])))),
            rule: .constructedStringNotAllowed),
        MalformedCase(
            name: "an attribute that is not a SEQUENCE", payload: payload(with: integer(99)),
            rule: .unexpectedTag(expected: .sequence, found: .integer)),
        MalformedCase(
            name: "a type INTEGER that is not minimally encoded",
            payload: setOf([
                sequence(element(.integer, [0x00, 0x02]), integer(1), element(.octetString, utf8String("a")))
            ]),
            rule: .invalidInteger),
        MalformedCase(
            name: "a version INTEGER that is not minimally encoded",
            payload: payload(with: sequence(integer(99), element(.integer, [0xFF, 0xFF]), element(.octetString, []))),
            rule: .invalidInteger),
        MalformedCase(
            name: "a type INTEGER over 64 bits",
            payload: payload(
                with: sequence(
                    element(.integer, [0x01] + Array(repeating: 0, count: 8)), integer(1), element(.octetString, []))),
            rule: .integerOutOfRange),
        MalformedCase(
            name: "a purchase that is not a SET",
            payload: setOf(Sample.requiredAttributes + [attribute(.inAppPurchase, element(.sequence, []))]),
            rule: .unexpectedTag(expected: .set, found: .sequence), location: "in_app[0]"),
        MalformedCase(
            name: "a purchase with bytes after its SET",
            payload: setOf(
                Sample.requiredAttributes + [
                    purchase(Sample.requiredPurchaseAttributes),
                    attribute(.inAppPurchase, setOf(Sample.requiredPurchaseAttributes) + [0x00]),
                ]),
            rule: .trailingData, location: "in_app[1]"),
        MalformedCase(
            name: "a purchase attribute without a value",
            payload: setOf(
                Sample.requiredAttributes + [
                    purchase(Sample.requiredPurchaseAttributes + [sequence(integer(1701), integer(1))])
                ]),
            rule: .truncated, location: "in_app[0]"),
    ]

    @Test("a payload that is not a strict DER SET OF ReceiptAttribute is malformed", arguments: malformed)
    func malformedPayload(testCase: MalformedCase) {
        let error = #expect(throws: ReceiptPayloadError.self) { try Receipt(payload: testCase.payload[...]) }
        #expect(error?.derReason == testCase.rule, "\(String(describing: error))")
        #expect(error?.location == testCase.location)
    }

    @Test("a long payload uses long-form lengths and decodes")
    func longFormLength() throws {
        let opaque = Array(repeating: UInt8(0xA5), count: 300)
        let decoded = try decodePayload(Sample.requiredAttributes + [attribute(.opaqueValue, opaque)])
        #expect(decoded.opaqueValue == opaque)
    }
}
