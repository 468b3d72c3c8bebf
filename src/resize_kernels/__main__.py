"""``python -m resize_kernels``: the resize-kernels command."""

from .cli import entry

if __name__ == "__main__":
    entry()
