"""Functions a training loop may call on apex's master parameters between micro-batches, each with
the call: NORMS return a value that scales as the gradients do (degree one), so divided by the
scale it is what apex showed; the others do not, and the migration must not divide them. The fast
suite reads them statically (tests/test_gradient_norms.py); the conformance group runs them on real
torch with the gradients multiplied by a power of two."""

NORMS = {
    "swin": ('''
def get_grad_norm(parameters, norm_type=2):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    parameters = list(filter(lambda p: p.grad is not None, parameters))
    norm_type = float(norm_type)
    total_norm = 0
    for p in parameters:
        param_norm = p.grad.data.norm(norm_type)
        total_norm += param_norm.item() ** norm_type
    total_norm = total_norm ** (1. / norm_type)
    return total_norm
''', "get_grad_norm(GRADIENTS)"),
    "swin, an L1 norm": (None, "get_grad_norm(GRADIENTS, 1)"),
    "swin, a 3-norm by keyword": (None, "get_grad_norm(GRADIENTS, norm_type=3)"),
    "stacked norms": ('''
def total_norm(parameters, norm_type=2.0):
    """One norm of the per-parameter norms."""
    parameters = [p for p in parameters if p.grad is not None]
    if len(parameters) == 0:
        return torch.tensor(0.)
    return torch.norm(torch.stack([torch.norm(p.grad.detach(), norm_type) for p in parameters]), norm_type)
''', "total_norm(GRADIENTS)"),
    "sum of absolute values": ('''
def l1(parameters):
    return sum([p.grad.abs().sum() for p in parameters if p.requires_grad and p.grad is not None])
''', "l1(GRADIENTS)"),
    "root of the sum of squares": ('''
def l2(parameters):
    return sum([(p.grad.float() ** 2).sum() for p in parameters]) ** 0.5
''', "l2(GRADIENTS)"),
    "largest entry": ('''
def largest(parameters):
    total = 0
    for p in parameters:
        total = total + p.grad.abs().max().item() / 2
    return total * 2
''', "largest(GRADIENTS)"),
}
NORMS["swin, an L1 norm"] = (NORMS["swin"][0], NORMS["swin, an L1 norm"][1])
NORMS["swin, a 3-norm by keyword"] = (NORMS["swin"][0], NORMS["swin, a 3-norm by keyword"][1])

NOT_NORMS = {
    "a squared norm": ('''
def squared(parameters):
    total = 0
    for p in parameters:
        total += p.grad.norm() ** 2
    return total
''', "squared(GRADIENTS)"),
    "a count of large gradients": ('''
def large(parameters):
    total = 0
    for p in parameters:
        if p.grad.norm() > 1:
            total += 1
    return total
''', "large(GRADIENTS)"),
    "a root of a signed sum": ('''
def signed(parameters):
    return sum([p.grad.sum() for p in parameters]) ** 0.5
''', "signed(GRADIENTS)"),
    "a norm plus a constant": ('''
def shifted(parameters):
    return sum([p.grad.norm() for p in parameters]) + 1
''', "shifted(GRADIENTS)"),
    "a filter on the gradients' values": ('''
def positive(parameters):
    return sum([p.grad.norm() for p in parameters if p.grad.sum() > 0])
''', "positive(GRADIENTS)"),
    "a norm that also scales the gradients": ('''
def scaling(parameters):
    total = 0
    for p in parameters:
        total += p.grad.norm()
        p.grad.mul_(0.5)
    return total
''', "scaling(GRADIENTS)"),
    "an order the call does not fix": (NORMS["swin"][0], "get_grad_norm(GRADIENTS, order)"),
    "an infinite order through the power": (NORMS["swin"][0], "get_grad_norm(GRADIENTS, float('inf'))"),
    "a path that returns nothing": ('''
def maybe(parameters, log=False):
    total = 0
    for p in parameters:
        total += p.grad.norm()
    if log:
        return total
''', "maybe(GRADIENTS)"),
}
