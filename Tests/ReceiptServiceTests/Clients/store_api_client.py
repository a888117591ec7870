"""Drives the service's App Store Server API with Apple's own app-store-server-library, unchanged but its base URL.

Reads one JSON document on standard input:
  {"base_url", "private_key" (PEM path), "key_id", "issuer_id", "bundle_id", "app_apple_id", "root" (DER path),
   "calls": [{"call": NAME, ...arguments}]}
and prints a JSON list with one result per call. Every signed transaction, renewal info and notification in an
answer is decoded with the library's SignedDataVerifier pinned to "root" (offline checks, at each signedDate), so a
result holds what Apple's verifier believes. An APIException becomes {"api_error": {"status", "error_code",
"error_message"}}; a VerificationException {"verification_error": STATUS}.

Calls: transaction_info {id}; history {id, version? ("v1", default "v2"), revision?, start?, end?, product_ids?,
product_types?, sort?, groups?, revoked?}; refund_history {id, revision?}; statuses {id, status?}; test_notification {}; test_status {token}; notification_history {start, end,
pagination_token?, type?, subtype?, transaction_id?, only_failures?}; decode_notification {signed_payload}.
"""

import enum
import json
import sys

import attr
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.models.Status import Status
from appstoreserverlibrary.models.Subtype import Subtype
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, ProductType, TransactionHistoryRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def plain(value):
    """A decoded model as JSON-ready data: attrs classes as objects of their set fields, enums as their values."""
    if attr.has(type(value)):
        return {
            field.name: plain(getattr(value, field.name))
            for field in attr.fields(type(value))
            if getattr(value, field.name) is not None
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def main():
    spec = json.load(sys.stdin)
    with open(spec["private_key"], "rb") as file:
        key = file.read()
    with open(spec["root"], "rb") as file:
        root = file.read()
    client = AppStoreServerAPIClient(key, spec["key_id"], spec["issuer_id"], spec["bundle_id"], Environment.PRODUCTION)
    client._base_url = spec["base_url"]  # the one change: our server instead of Apple's
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, spec["bundle_id"], spec["app_apple_id"])

    def transaction(signed):
        return plain(verifier.verify_and_decode_signed_transaction(signed))

    def renewal(signed):
        return plain(verifier.verify_and_decode_renewal_info(signed))

    def notification(signed):
        decoded = plain(verifier.verify_and_decode_notification(signed))
        data = decoded.get("data", {})
        if "signedTransactionInfo" in data:
            data["transaction"] = transaction(data.pop("signedTransactionInfo"))
        if "signedRenewalInfo" in data:
            data["renewal"] = renewal(data.pop("signedRenewalInfo"))
        return decoded

    def run(call):
        name = call["call"]
        if name == "transaction_info":
            return {"transaction": transaction(client.get_transaction_info(call["id"]).signedTransactionInfo)}
        if name == "history":
            request = TransactionHistoryRequest(
                startDate=call.get("start"), endDate=call.get("end"), productIds=call.get("product_ids"),
                productTypes=[ProductType(t) for t in call["product_types"]] if "product_types" in call else None,
                sort=Order(call["sort"]) if "sort" in call else None,
                subscriptionGroupIdentifiers=call.get("groups"), revoked=call.get("revoked"))
            version = GetTransactionHistoryVersion(call.get("version", "v2"))
            answer = client.get_transaction_history(call["id"], call.get("revision"), request, version)
            return {
                "revision": answer.revision, "has_more": answer.hasMore, "bundle_id": answer.bundleId,
                "app_apple_id": answer.appAppleId, "environment": plain(answer.environment),
                "transactions": [transaction(signed) for signed in answer.signedTransactions],
            }
        if name == "refund_history":
            answer = client.get_refund_history(call["id"], call.get("revision"))
            return {
                "revision": answer.revision, "has_more": answer.hasMore,
                "transactions": [transaction(signed) for signed in answer.signedTransactions],
            }
        if name == "statuses":
            statuses = [Status(s) for s in call["status"]] if "status" in call else None
            answer = client.get_all_subscription_statuses(call["id"], statuses)
            return {
                "environment": plain(answer.environment), "bundle_id": answer.bundleId,
                "app_apple_id": answer.appAppleId,
                "groups": [{
                    "group": group.subscriptionGroupIdentifier,
                    "last": [{
                        "original_transaction_id": last.originalTransactionId, "status": plain(last.status),
                        "transaction": transaction(last.signedTransactionInfo),
                        "renewal": renewal(last.signedRenewalInfo),
                    } for last in group.lastTransactions],
                } for group in answer.data],
            }
        if name == "test_notification":
            return {"token": client.request_test_notification().testNotificationToken}
        if name == "test_status":
            answer = client.get_test_notification_status(call["token"])
            return {
                "notification": notification(answer.signedPayload),
                "attempts": [plain(attempt) for attempt in answer.sendAttempts or []],
            }
        if name == "notification_history":
            request = NotificationHistoryRequest(
                startDate=call["start"], endDate=call["end"],
                notificationType=NotificationTypeV2(call["type"]) if "type" in call else None,
                notificationSubtype=Subtype(call["subtype"]) if "subtype" in call else None,
                transactionId=call.get("transaction_id"), onlyFailures=call.get("only_failures"))
            answer = client.get_notification_history(call.get("pagination_token"), request)
            return {
                "pagination_token": answer.paginationToken, "has_more": answer.hasMore,
                "items": [{
                    "notification": notification(item.signedPayload),
                    "attempts": [plain(attempt) for attempt in item.sendAttempts or []],
                } for item in answer.notificationHistory],
            }
        if name == "decode_notification":
            return {"notification": notification(call["signed_payload"])}
        raise ValueError("unknown call " + name)

    results = []
    for call in spec["calls"]:
        try:
            results.append(run(call))
        except APIException as error:
            results.append({"api_error": {
                "status": error.http_status_code, "error_code": error.raw_api_error,
                "error_message": error.error_message}})
        except VerificationException as error:
            results.append({"verification_error": error.status.name})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
