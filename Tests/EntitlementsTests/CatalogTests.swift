import Entitlements
import ReceiptModel
import Testing

@Suite("Catalog: the issue's example, and values built in code")
struct CatalogTests {
    @Test("the issue's example catalog parses to its five products and a P16D grace period")
    func example() throws {
        let catalog = try Scenario.exampleCatalog()
        #expect(
            catalog.products.map(\.id) == [
                ProductID.removeAds, ProductID.proMonthly, ProductID.premiumYearly, ProductID.season,
                ProductID.coins100,
            ])
        #expect(
            catalog.products.map(\.type) == [.nonConsumable, .autoRenewable, .autoRenewable, .nonRenewing, .consumable])
        #expect(catalog.gracePeriod == ISODuration("P16D"))
        let premium = try #require(catalog.product(ProductID.premiumYearly))
        #expect(premium.entitlements == ["pro", "premium"])
        #expect(premium.group == "main")
        #expect(premium.rank == 1)
        #expect(catalog.product(ProductID.proMonthly)?.rank == 2)
        #expect(catalog.product(ProductID.season)?.duration == ISODuration("P30D"))
        #expect(catalog.product(ProductID.coins100)?.amount == 100)
        #expect(catalog.product(ProductID.removeAds)?.group == nil)
        #expect(catalog.product("com.example.unknown") == nil)
    }

    @Test(
        "without grace_period, or with P0D, there is no grace period", arguments: [#""#, #", "grace_period": "P0D""#])
    func noGracePeriod(member: String) throws {
        let catalog = try Scenario.catalog(
            #"{"products": [{"id": "a", "type": "non_consumable", "entitlements": ["x"]}]"# + member + "}")
        #expect(catalog.gracePeriod == nil)
    }

    @Test("the same rank may be used in different groups, and consumables may share a balance")
    func allowedSharing() throws {
        let catalog = try Scenario.catalog(
            """
            {"products": [
              {"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "one", "rank": 1},
              {"id": "b", "type": "auto_renewable", "entitlements": ["x"], "group": "two", "rank": 1},
              {"id": "c", "type": "consumable", "entitlements": ["coins"], "amount": 1},
              {"id": "d", "type": "consumable", "entitlements": ["coins"], "amount": 10}
            ]}
            """)
        #expect(catalog.products.count == 4)
    }

    @Test("an empty product list is a valid catalog")
    func empty() throws {
        #expect(try Scenario.catalog(#"{"products": []}"#).products.isEmpty)
    }

    @Test("a catalog built from values follows the same rules")
    func fromValues() throws {
        let error = try #require(throws: CatalogError.self) {
            try Catalog(products: [
                Catalog.Product(id: "ok", type: .nonConsumable, entitlements: ["x"]),
                Catalog.Product(id: "coins", type: .consumable, entitlements: ["coins"]),
            ])
        }
        #expect(error.path == "products[1].amount")
        let valid = try Catalog(
            products: [Catalog.Product(id: "s", type: .nonRenewing, entitlements: ["s"], duration: ISODuration("P1W"))],
            gracePeriod: ISODuration("P3D"))
        #expect(valid.gracePeriod == ISODuration("P3D"))
    }

    @Test("an error reads as its path then its rule")
    func errorDescription() {
        #expect(
            CatalogError(path: "products[2].duration", rule: "is required").description
                == "products[2].duration: is required")
        #expect(CatalogError(path: "", rule: "not valid JSON").description == "not valid JSON")
    }
}

/// A catalog that must be refused, with the path and (part of) the rule the error must name.
struct InvalidCatalog: CustomTestStringConvertible, Sendable {
    let name: String
    let json: String
    let path: String
    let rule: String

    var testDescription: String { name }

    /// A catalog whose `products` array holds `products` (JSON text of the elements).
    static func products(_ name: String, _ products: String, path: String, rule: String) -> InvalidCatalog {
        InvalidCatalog(name: name, json: #"{"products": ["# + products + "]}", path: path, rule: rule)
    }

    static let all: [InvalidCatalog] = [
        .products(
            "unknown type", #"{"id": "a", "type": "subscription", "entitlements": ["x"]}"#, path: "products[0].type",
            rule: #"unknown type "subscription""#),
        .products(
            "missing type", #"{"id": "a", "entitlements": ["x"]}"#, path: "products[0].type", rule: "is required"),
        .products(
            "missing id", #"{"type": "non_consumable", "entitlements": ["x"]}"#, path: "products[0].id",
            rule: "is required"),
        .products(
            "empty id", #"{"id": "", "type": "non_consumable", "entitlements": ["x"]}"#, path: "products[0].id",
            rule: "must not be empty"),
        .products(
            "id not a string", #"{"id": 7, "type": "non_consumable", "entitlements": ["x"]}"#, path: "products[0].id",
            rule: "must be a string"),
        .products(
            "duplicate product id",
            #"{"id": "a", "type": "non_consumable", "entitlements": ["x"]}, "#
                + #"{"id": "a", "type": "non_consumable", "entitlements": ["y"]}"#,
            path: "products[1].id", rule: #"duplicate product id "a" (also products[0])"#),
        .products(
            "missing group", #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "rank": 1}"#,
            path: "products[0].group", rule: "is required for auto_renewable"),
        .products(
            "empty group", #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "", "rank": 1}"#,
            path: "products[0].group", rule: "must not be empty"),
        .products(
            "missing rank", #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g"}"#,
            path: "products[0].rank", rule: "is required for auto_renewable"),
        .products(
            "rank 0", #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": 0}"#,
            path: "products[0].rank", rule: "1 or more"),
        .products(
            "negative rank", #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": -1}"#,
            path: "products[0].rank", rule: "1 or more"),
        .products(
            "fractional rank",
            #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": 1.5}"#,
            path: "products[0].rank", rule: "must be an integer"),
        .products(
            "rank as a string",
            #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": "1"}"#,
            path: "products[0].rank", rule: "must be an integer"),
        .products(
            "duplicate rank in a group",
            #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": 1}, "#
                + #"{"id": "b", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": 1}"#,
            path: "products[1].rank", rule: #"rank 1 is already used in group "g" by products[0]"#),
        .products(
            "missing duration", #"{"id": "a", "type": "non_renewing", "entitlements": ["x"]}"#,
            path: "products[0].duration", rule: "is required for non_renewing"),
        .products(
            "zero duration", #"{"id": "a", "type": "non_renewing", "entitlements": ["x"], "duration": "P0D"}"#,
            path: "products[0].duration", rule: "must be longer than zero"),
        .products(
            "bad duration", #"{"id": "a", "type": "non_renewing", "entitlements": ["x"], "duration": "30 days"}"#,
            path: "products[0].duration", rule: #""30 days" is not an ISO 8601 duration"#),
        .products(
            "missing amount", #"{"id": "a", "type": "consumable", "entitlements": ["x"]}"#,
            path: "products[0].amount", rule: "is required for consumable"),
        .products(
            "zero amount", #"{"id": "a", "type": "consumable", "entitlements": ["x"], "amount": 0}"#,
            path: "products[0].amount", rule: "1 or more"),
        .products(
            "negative amount", #"{"id": "a", "type": "consumable", "entitlements": ["x"], "amount": -5}"#,
            path: "products[0].amount", rule: "1 or more"),
        .products(
            "rank on a consumable",
            #"{"id": "a", "type": "consumable", "entitlements": ["x"], "amount": 1, "rank": 1}"#,
            path: "products[0].rank", rule: "applies only to auto_renewable products, not consumable"),
        .products(
            "group on a non_renewing product",
            #"{"id": "a", "type": "non_renewing", "entitlements": ["x"], "duration": "P1D", "group": "g"}"#,
            path: "products[0].group", rule: "applies only to auto_renewable products, not non_renewing"),
        .products(
            "duration on a non_consumable",
            #"{"id": "a", "type": "non_consumable", "entitlements": ["x"], "duration": "P1D"}"#,
            path: "products[0].duration", rule: "applies only to non_renewing products, not non_consumable"),
        .products(
            "amount on an auto_renewable",
            #"{"id": "a", "type": "auto_renewable", "entitlements": ["x"], "group": "g", "rank": 1, "amount": 1}"#,
            path: "products[0].amount", rule: "applies only to consumable products, not auto_renewable"),
        .products(
            "missing entitlements", #"{"id": "a", "type": "non_consumable"}"#, path: "products[0].entitlements",
            rule: "is required"),
        .products(
            "no entitlements", #"{"id": "a", "type": "non_consumable", "entitlements": []}"#,
            path: "products[0].entitlements", rule: "must name at least one entitlement"),
        .products(
            "empty entitlement name", #"{"id": "a", "type": "non_consumable", "entitlements": ["x", ""]}"#,
            path: "products[0].entitlements[1]", rule: "must not be empty"),
        .products(
            "entitlement listed twice", #"{"id": "a", "type": "non_consumable", "entitlements": ["x", "x"]}"#,
            path: "products[0].entitlements[1]", rule: #""x" is listed twice"#),
        .products(
            "entitlement name not a string", #"{"id": "a", "type": "non_consumable", "entitlements": [1]}"#,
            path: "products[0].entitlements[0]", rule: "must be a string"),
        .products(
            "a balance, then a state of the same name",
            #"{"id": "a", "type": "consumable", "entitlements": ["coins"], "amount": 1}, "#
                + #"{"id": "b", "type": "non_consumable", "entitlements": ["coins"]}"#,
            path: "products[1].entitlements", rule: #""coins" is a balance of consumable products[0]"#),
        .products(
            "a state, then a balance of the same name",
            #"{"id": "a", "type": "non_consumable", "entitlements": ["coins"]}, "#
                + #"{"id": "b", "type": "consumable", "entitlements": ["coins"], "amount": 1}"#,
            path: "products[1].entitlements", rule: #""coins" is a balance here but a state granted by products[0]"#),
        .products(
            "unknown product key", #"{"id": "a", "type": "non_consumable", "entitlements": ["x"], "price": 1}"#,
            path: "products[0].price", rule: "is not a known key"),
        .products("product not an object", #""com.example.a""#, path: "products[0]", rule: "must be a JSON object"),
        InvalidCatalog(name: "malformed JSON", json: #"{"products": [}"#, path: "", rule: "not valid JSON"),
        InvalidCatalog(
            name: "duplicate key", json: #"{"products": [], "products": []}"#, path: "", rule: "not valid JSON"),
        InvalidCatalog(name: "not an object", json: "[]", path: "", rule: "must be a JSON object"),
        InvalidCatalog(name: "missing products", json: "{}", path: "products", rule: "is required"),
        InvalidCatalog(
            name: "products not an array", json: #"{"products": {}}"#, path: "products",
            rule: "must be an array, found an object"),
        InvalidCatalog(
            name: "unknown top-level key", json: #"{"products": [], "version": 2}"#, path: "version",
            rule: "is not a known key"),
        InvalidCatalog(
            name: "bad grace_period", json: #"{"products": [], "grace_period": "16 days"}"#, path: "grace_period",
            rule: #""16 days" is not an ISO 8601 duration"#),
        InvalidCatalog(
            name: "lower-case grace_period", json: #"{"products": [], "grace_period": "p16d"}"#, path: "grace_period",
            rule: "is not an ISO 8601 duration"),
        InvalidCatalog(
            name: "grace_period not a string", json: #"{"products": [], "grace_period": 16}"#, path: "grace_period",
            rule: "must be a string"),
    ]
}

@Suite("Catalog validation: every error names its key path and the rule it breaks")
struct CatalogValidationTests {
    @Test("an invalid catalog is refused", arguments: InvalidCatalog.all)
    func refused(_ invalid: InvalidCatalog) throws {
        let error = try #require(throws: CatalogError.self) { try Catalog(json: Array(invalid.json.utf8)) }
        #expect(error.path == invalid.path)
        #expect(error.rule.contains(invalid.rule), "\(error.rule)")
    }
}
