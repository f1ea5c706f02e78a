"""Developer tools outside the product: the fleet generator, the demo clusters and the benchmark.

Product apps (``inventory``, ``claims``, ``migration``, ``config``) never import this package
(``tests/devtools/test_product_never_imports_devtools.py``); it imports them. Its management
commands (``load_demo``, ``seed_readiness_demo``, ``generate_fleet``, ``benchmark``) serve
``make demo`` and ``make bench``.
"""
