"""The kinds of secret the detector names: phrases that fit "looks like <kind>"."""

from __future__ import annotations

API_KEY = "an API key"
ACCESS_TOKEN = "an access token"
BEARER_TOKEN = "a bearer token"
PASSWORD = "a password"
PRIVATE_KEY = "a private key"
ONE_TIME_CODE = "a one-time code"
PIN = "a PIN"
CARD_NUMBER = "a bank card number"
CARD_CODE = "a card security code"
RECOVERY_PHRASE = "a recovery phrase"
SOCIAL_SECURITY_NUMBER = "a social security number"
PASSPORT_NUMBER = "a passport number"
RESIDENT_ID_NUMBER = "a resident identity number"
