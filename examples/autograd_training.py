"""The Norch article's training loop on isthmus's own autograd: only the import changed.

A two-layer network (Linear(1, 10) -> Sigmoid -> Linear(10, 1)) learns sin(x)**2 one sample at a
time with MSELoss and SGD, on CUDA when a GPU is there, else on the CPU (docs/autograd.md).

Run from the repository root after a build:
    PYTHONPATH=build/python python3 examples/autograd_training.py
"""
import math
import random

import isthmus as q
import isthmus.nn as nn
import isthmus.optim as optim

random.seed(1)


class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.fc1 = nn.Linear(1, 10)
        self.sigmoid = nn.Sigmoid()
        self.fc2 = nn.Linear(10, 1)

    def forward(self, x):
        out = self.fc1(x)
        out = self.sigmoid(out)
        out = self.fc2(out)
        return out


device = "cuda" if q.cuda_available() else "cpu"
q.init(device)
q.manual_seed(1)
epochs = 10

model = MyModel().to(device)
criterion = nn.MSELoss()
optimizer = optim.SGD(model.parameters(), lr=0.001)
print(model)

x_values = [0.4 * i for i in range(51)]
y_true = [math.pow(math.sin(x), 2) for x in x_values]

losses = []
for epoch in range(epochs):
    for x, target in zip(x_values, y_true):
        x = q.value([[x]]).T
        target = q.value([[target]]).T
        x = x.to_device(device)
        target = target.to_device(device)

        outputs = model(x)
        loss = criterion(outputs, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print(f"Epoch [{epoch + 1}/{epochs}], Loss: {float(loss):.4f}")
    losses.append(float(loss))

assert losses[-1] < losses[0], "the loss did not go down"
