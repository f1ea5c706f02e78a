"""Chargeback ledger: which device each claim held when (``ChargebackHolding``), kept by a
hook after each sync (``LedgerConfig.after_sync``). Its own app (label ``chargeback``) so its
migrations never collide with the claims app's."""
