import Foundation
import StrictJSON
import Testing

@testable import ReceiptService

/// The service's interface is written down as an OpenAPI 3.1 document, served by the service itself, and it
/// describes exactly the routes the service has (schemathesis, run by `.ci/schemathesis`, checks the answers).
@Suite("The OpenAPI document")
struct OpenAPITests {
    static let document = (try? JSONValue(parsing: ReceiptService.openAPIDocument)) ?? .null

    /// `METHOD /path` of every operation in the document.
    static var documentedOperations: Set<String> {
        guard case .object(let paths)? = document["paths"] else { return [] }
        var operations = Set<String>()
        for member in paths.members {
            guard case .object(let item) = member.value else { continue }
            for method in item.keys { operations.insert("\(method.uppercased()) \(member.key)") }
        }
        return operations
    }

    @Test("GET /openapi.json serves the document as JSON, to anyone")
    func served() throws {
        let reply = try ServiceFixture().send("GET", "/openapi.json", token: nil)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "application/json")
        #expect(reply.body == ReceiptService.openAPIDocument)
        #expect(try reply.json()["openapi"] == .string("3.1.0"))
    }

    @Test("every route of the route table is documented, and the document has no operation the service lacks")
    func matchesRoutes() {
        let routes = Set(ReceiptService.routes.map { "\($0.method) \($0.template)" })
        #expect(routes == Self.documentedOperations)
    }

    @Test("the operations that require a token or a console session say so, and the others accept none")
    func security() {
        for route in ReceiptService.routes {
            let operation = Self.document["paths"]?[route.template]?[route.method.lowercased()]
            let security = operation?["security"]
            switch route.access {
            case .token:
                #expect(security == .array([.object(JSONObject(["bearerAuth": .array([])]))]), "\(route.template)")
            case .verification:
                #expect(
                    security == .array([.object(JSONObject()), .object(JSONObject(["bearerAuth": .array([])]))]),
                    "\(route.template)")
            case .open, .consoleSignIn: #expect(security == nil, "\(route.template)")
            case .console, .consolePage:
                #expect(security == .array([.object(JSONObject(["consoleSession": .array([])]))]), "\(route.template)")
            case .storeAPI:
                #expect(
                    security == .array([.object(JSONObject(["appStoreServerAPI": .array([])]))]), "\(route.template)")
            }
        }
    }
}
