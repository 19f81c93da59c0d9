"""σ of the discrete Gaussian (Δ = 1) for a target (ε, δ): zCDP route vs exact PLD."""
from scipy import optimize
from fedpriv.privacy import compose_routes, events
for eps, delta in ((0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-6), (1.0, 1e-9)):
    out = {}
    for route in ("zcdp", "pld"):
        f = lambda s: compose_routes([(events.DiscreteGaussian(sigma=s, l2_sensitivity=1.0), 1)], delta)[route] - eps
        out[route] = optimize.brentq(f, 0.3, 50.0, xtol=1e-4)
    print(eps, delta, out, f"zCDP asks {100*(out['zcdp']/out['pld']-1):.1f}% more noise")
