"""Verifies a receipt with the itunes-iap client library (PyPI `itunes-iap`), unchanged except for its URLs.

Usage: itunesiap_client.py PRODUCTION_URL SANDBOX_URL BASE64_RECEIPT
Prints one JSON object: what the library made of the answer, or the status of the error it raised.
"""
import json
import sys

import itunesiap
from itunesiap import exceptions
from itunesiap.receipt import MissingFieldError

production_url, sandbox_url, receipt_data = sys.argv[1:4]
# The only change an existing client makes: where verifyReceipt lives.
itunesiap.Request.PRODUCTION_VALIDATION_URL = production_url
itunesiap.Request.SANDBOX_VALIDATION_URL = sandbox_url

try:
    # The review environment tries production, then sandbox when production answers 21007, as Apple advises.
    response = itunesiap.verify(receipt_data, env=itunesiap.env.review)
except exceptions.InvalidReceipt as error:
    print(json.dumps({"error_status": error.status}))
    sys.exit(0)

try:
    latest_receipt_info = [purchase.transaction_id for purchase in response.latest_receipt_info]
except MissingFieldError:
    # Apple sends latest_receipt_info only for receipts with auto-renewable subscriptions.
    latest_receipt_info = None

print(json.dumps({
    "status": response.status,
    "bundle_id": response.receipt.bundle_id,
    "in_app": [
        {
            "product_id": purchase.product_id,
            "transaction_id": purchase.transaction_id,
            "quantity": purchase.quantity,
            "purchase_date": purchase.purchase_date.isoformat(),
        }
        for purchase in response.receipt.in_app
    ],
    "latest_receipt_info": latest_receipt_info,
    "last_in_app": response.receipt.last_in_app.product_id,
}))
