__all__: list = []
