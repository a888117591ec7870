import ReceiptModel
import StrictJSON

/// A catalog that is not valid: the key path (`products[2].duration`, empty for the document) and the rule.
public typealias CatalogError = JSONFieldError

/// The app's product configuration: what each product is and which entitlements it grants.
///
/// ```json
/// {"bundle_id": "com.example.game",
///  "products": [
///    {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]},
///    {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "main", "rank": 2},
///    {"id": "com.example.season", "type": "non_renewing", "entitlements": ["season"], "duration": "P30D"},
///    {"id": "com.example.coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100}],
///  "grace_period": "P16D"}
/// ```
public struct Catalog: Hashable, Sendable {
    public enum ProductType: String, CaseIterable, Sendable {
        case consumable
        case nonConsumable = "non_consumable"
        case autoRenewable = "auto_renewable"
        case nonRenewing = "non_renewing"
    }

    public struct Product: Hashable, Sendable {
        public let id: String
        public let type: ProductType
        /// The entitlements it grants; for consumables, the balances it adds to.
        public let entitlements: [String]
        /// Auto-renewable only: the subscription group, and the level in it (1 is the best).
        public let group: String?
        public let rank: Int?
        /// Non-renewing only: how long one purchase lasts.
        public let duration: ISODuration?
        /// Consumable only: how much one unit adds to each of its balances.
        public let amount: Int64?
        /// Auto-renewable only: the group's identifier in App Store Connect (`subscriptionGroupIdentifier`, a number
        /// such as `20652543`) when it is not ``group`` itself.
        public let subscriptionGroupIdentifier: String?

        public init(
            id: String, type: ProductType, entitlements: [String], group: String? = nil, rank: Int? = nil,
            duration: ISODuration? = nil, amount: Int64? = nil, subscriptionGroupIdentifier: String? = nil
        ) {
            self.id = id
            self.type = type
            self.entitlements = entitlements
            self.group = group
            self.rank = rank
            self.duration = duration
            self.amount = amount
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        }

        /// What Apple calls its group (`subscriptionGroupIdentifier`): ``subscriptionGroupIdentifier`` when set, else
        /// ``group``; nil for products that are not auto-renewable.
        public var appleGroupIdentifier: String? { subscriptionGroupIdentifier ?? group }
    }

    public let products: [Product]
    /// How long an auto-renewable subscription keeps its entitlements after it expires; nil for none.
    public let gracePeriod: ISODuration?
    /// The app the catalog describes, when it says so: the service then names each subscription's group
    /// (`subscription_group_identifier`) in that app's verifyReceipt answers.
    public let bundleID: String?
    private let productsByID: [String: Product]

    /// A catalog from values, validated by the same rules as ``init(json:)``.
    public init(products: [Product], gracePeriod: ISODuration? = nil, bundleID: String? = nil) throws(CatalogError) {
        if bundleID?.isEmpty == true { throw CatalogError(path: "bundle_id", rule: "must not be empty") }
        var byID: [String: Product] = [:]
        var firstIndex: [String: Int] = [:]
        var ranks: [String: [Int: Int]] = [:]
        var balanceOwner: [String: Int] = [:]
        var stateOwner: [String: Int] = [:]
        for (index, product) in products.enumerated() {
            let path = "products[\(index)]"
            guard !product.id.isEmpty else { throw CatalogError(path: path + ".id", rule: "must not be empty") }
            if let earlier = firstIndex[product.id] {
                throw CatalogError(
                    path: path + ".id", rule: "duplicate product id \"\(product.id)\" (also products[\(earlier)])")
            }
            firstIndex[product.id] = index
            try Self.checkFields(product, path: path)
            if let group = product.group, let rank = product.rank {
                if let other = ranks[group]?[rank] {
                    throw CatalogError(
                        path: path + ".rank",
                        rule:
                            "rank \(rank) is already used in group \"\(group)\" by products[\(other)]; ranks in a group must differ"
                    )
                }
                ranks[group, default: [:]][rank] = index
            }
            for name in product.entitlements {
                if product.type == .consumable {
                    if let other = stateOwner[name] {
                        throw CatalogError(
                            path: path + ".entitlements",
                            rule:
                                "\"\(name)\" is a balance here but a state granted by products[\(other)]; use another name"
                        )
                    }
                    balanceOwner[name] = balanceOwner[name] ?? index
                } else {
                    if let other = balanceOwner[name] {
                        throw CatalogError(
                            path: path + ".entitlements",
                            rule: "\"\(name)\" is a balance of consumable products[\(other)]; use another name")
                    }
                    stateOwner[name] = stateOwner[name] ?? index
                }
            }
            byID[product.id] = product
        }
        self.products = products
        self.gracePeriod = gracePeriod.flatMap { $0.isZero ? nil : $0 }
        self.bundleID = bundleID
        self.productsByID = byID
    }

    /// Reads and validates a catalog document. Every problem names its key path and the rule it breaks.
    public init(json text: [UInt8]) throws(CatalogError) {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: text)
        } catch {
            throw CatalogError(path: "", rule: "not valid JSON: \(error)")
        }
        let root = try JSONObjectReader(document)
        try root.rejectUnknownKeys(allowed: ["bundle_id", "products", "grace_period"])
        var gracePeriod: ISODuration?
        if let text = try root.string("grace_period") {
            guard let duration = ISODuration(text) else {
                throw CatalogError(path: "grace_period", rule: "\"\(text)\" is not an ISO 8601 duration such as P16D")
            }
            gracePeriod = duration
        }
        guard let elements = try root.array("products") else {
            throw CatalogError(path: "products", rule: "is required and must be an array of products")
        }
        var products: [Product] = []
        for (index, element) in elements.enumerated() {
            products.append(try Self.product(element, path: "products[\(index)]"))
        }
        try self.init(products: products, gracePeriod: gracePeriod, bundleID: try root.string("bundle_id"))
    }

    /// The product with this id, if the catalog has it.
    public func product(_ id: String) -> Product? { productsByID[id] }

    private static func product(_ value: JSONValue, path: String) throws(CatalogError) -> Product {
        let members = try JSONObjectReader(value, path: path)
        try members.rejectUnknownKeys(allowed: [
            "id", "type", "entitlements", "group", "rank", "duration", "amount", "subscription_group_identifier",
        ])
        let id = try members.requiredString("id")
        let typeName = try members.requiredString("type")
        guard let type = ProductType(rawValue: typeName) else {
            let known = ProductType.allCases.map(\.rawValue).joined(separator: ", ")
            throw CatalogError(path: path + ".type", rule: "unknown type \"\(typeName)\" (use one of \(known))")
        }
        guard let entitlements = try members.strings("entitlements") else {
            throw CatalogError(path: path + ".entitlements", rule: "is required and must be an array of names")
        }
        var duration: ISODuration?
        if let text = try members.string("duration") {
            guard let parsed = ISODuration(text) else {
                throw CatalogError(
                    path: path + ".duration", rule: "\"\(text)\" is not an ISO 8601 duration such as P30D")
            }
            duration = parsed
        }
        return Product(
            id: id, type: type, entitlements: entitlements, group: try members.string("group"),
            rank: try members.integer("rank", in: Int(Int32.min)...Int(Int32.max)), duration: duration,
            amount: try members.integer("amount", in: Int64(Int32.min)...Int64(Int32.max)),
            subscriptionGroupIdentifier: try members.string("subscription_group_identifier"))
    }

    /// The rules a product's fields must follow for its type.
    private static func checkFields(_ product: Product, path: String) throws(CatalogError) {
        guard !product.entitlements.isEmpty else {
            throw CatalogError(path: path + ".entitlements", rule: "must name at least one entitlement")
        }
        var seen = Set<String>()
        for (index, name) in product.entitlements.enumerated() {
            guard !name.isEmpty else {
                throw CatalogError(path: path + ".entitlements[\(index)]", rule: "must not be empty")
            }
            guard seen.insert(name).inserted else {
                throw CatalogError(path: path + ".entitlements[\(index)]", rule: "\"\(name)\" is listed twice")
            }
        }
        let type = product.type
        func require(_ present: Bool, _ key: String, _ what: String) throws(CatalogError) {
            guard present else {
                throw CatalogError(path: "\(path).\(key)", rule: "is required for \(type.rawValue) products (\(what))")
            }
        }
        func forbid(_ present: Bool, _ key: String, _ owner: ProductType) throws(CatalogError) {
            guard !present else {
                throw CatalogError(
                    path: "\(path).\(key)", rule: "applies only to \(owner.rawValue) products, not \(type.rawValue)")
            }
        }
        if type == .autoRenewable {
            try require(product.group != nil, "group", "the subscription group")
            try require(product.rank != nil, "rank", "the level in its group, 1 being the best")
            guard product.group?.isEmpty == false else {
                throw CatalogError(path: path + ".group", rule: "must not be empty")
            }
            guard let rank = product.rank, rank >= 1 else {
                throw CatalogError(path: path + ".rank", rule: "must be a whole number of 1 or more")
            }
            guard product.subscriptionGroupIdentifier?.isEmpty != true else {
                throw CatalogError(path: path + ".subscription_group_identifier", rule: "must not be empty")
            }
        } else {
            try forbid(product.group != nil, "group", .autoRenewable)
            try forbid(
                product.subscriptionGroupIdentifier != nil, "subscription_group_identifier", .autoRenewable)
            try forbid(product.rank != nil, "rank", .autoRenewable)
        }
        if type == .nonRenewing {
            try require(product.duration != nil, "duration", "an ISO 8601 duration such as P30D")
            guard product.duration?.isZero == false else {
                throw CatalogError(path: path + ".duration", rule: "must be longer than zero")
            }
        } else {
            try forbid(product.duration != nil, "duration", .nonRenewing)
        }
        if type == .consumable {
            try require(product.amount != nil, "amount", "how much one unit adds")
            guard let amount = product.amount, amount >= 1 else {
                throw CatalogError(path: path + ".amount", rule: "must be a whole number of 1 or more")
            }
        } else {
            try forbid(product.amount != nil, "amount", .consumable)
        }
    }
}
