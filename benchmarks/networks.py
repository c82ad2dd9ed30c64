"""Whole networks for the OpenVINO benchmark, in plain PyTorch.

The architectures of torchvision's ``resnet18``, ``googlenet`` (no auxiliary
heads, ``transform_input=False``), ``squeezenet1_0``, ``densenet121``,
``vgg11``, ``alexnet`` and ``mobilenet_v3_small``, layer for layer (the same
convolutions, normalisations, activations and, what matters here, the same
pooling layers with the same kernel, stride, padding and ``ceil_mode``),
written out so that the benchmark needs no torchvision. Weights are random:
the benchmark measures time and compares the systems' outputs with each
other and with PyTorch, not accuracy.
"""

from __future__ import annotations

NETWORKS = (
    "resnet18",
    "googlenet",
    "squeezenet1_0",
    "densenet121",
    "vgg11",
    "alexnet",
    "mobilenet_v3_small",
)


def build(name):
    """The network ``name`` (eval mode, seeded random weights) and its input shape (C, H, W)."""
    import torch

    torch.manual_seed(0)
    module = _BUILDERS[name]()
    return module.eval(), (3, 224, 224)


def _torch():
    import torch
    from torch import nn

    return torch, nn


def _resnet18():
    torch, nn = _torch()

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(out + identity)

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            layers, inplanes = [], 64
            for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers.append(
                    nn.Sequential(
                        BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes, 1)
                    )
                )
                inplanes = planes
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet18()


def _googlenet():
    torch, nn = _torch()

    class BasicConv2d(nn.Module):
        def __init__(self, cin, cout, **kw):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, bias=False, **kw)
            self.bn = nn.BatchNorm2d(cout, eps=0.001)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))

    class Inception(nn.Module):
        def __init__(self, cin, ch1, ch3red, ch3, ch5red, ch5, proj):
            super().__init__()
            self.branch1 = BasicConv2d(cin, ch1, kernel_size=1)
            self.branch2 = nn.Sequential(
                BasicConv2d(cin, ch3red, kernel_size=1),
                BasicConv2d(ch3red, ch3, kernel_size=3, padding=1),
            )
            self.branch3 = nn.Sequential(
                BasicConv2d(cin, ch5red, kernel_size=1),
                BasicConv2d(ch5red, ch5, kernel_size=3, padding=1),
            )
            self.branch4 = nn.Sequential(
                nn.MaxPool2d(3, 1, 1, ceil_mode=True), BasicConv2d(cin, proj, kernel_size=1)
            )

        def forward(self, x):
            return torch.cat(
                [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1
            )

    class GoogLeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = BasicConv2d(3, 64, kernel_size=7, stride=2, padding=3)
            self.maxpool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2 = BasicConv2d(64, 64, kernel_size=1)
            self.conv3 = BasicConv2d(64, 192, kernel_size=3, padding=1)
            self.maxpool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
            self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
            self.maxpool3 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
            self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
            self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
            self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
            self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
            self.maxpool4 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
            self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(1024, 1000)

        def forward(self, x):
            x = self.maxpool1(self.conv1(x))
            x = self.maxpool2(self.conv3(self.conv2(x)))
            x = self.maxpool3(self.inception3b(self.inception3a(x)))
            for block in (
                self.inception4a,
                self.inception4b,
                self.inception4c,
                self.inception4d,
                self.inception4e,
            ):
                x = block(x)
            x = self.inception5b(self.inception5a(self.maxpool4(x)))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return GoogLeNet()


def _squeezenet1_0():
    torch, nn = _torch()

    class Fire(nn.Module):
        def __init__(self, cin, squeeze, e1, e3):
            super().__init__()
            self.squeeze = nn.Conv2d(cin, squeeze, 1)
            self.expand1x1 = nn.Conv2d(squeeze, e1, 1)
            self.expand3x3 = nn.Conv2d(squeeze, e3, 3, padding=1)

        def forward(self, x):
            x = torch.relu(self.squeeze(x))
            return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)

    class SqueezeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, 7, 2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(96, 16, 64, 64),
                Fire(128, 16, 64, 64),
                Fire(128, 32, 128, 128),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(256, 32, 128, 128),
                Fire(256, 48, 192, 192),
                Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(512, 64, 256, 256),
            )
            self.classifier = nn.Sequential(
                nn.Dropout(0.5),
                nn.Conv2d(512, 1000, 1),
                nn.ReLU(inplace=True),
                nn.AdaptiveAvgPool2d((1, 1)),
            )

        def forward(self, x):
            return torch.flatten(self.classifier(self.features(x)), 1)

    return SqueezeNet()


def _densenet121():
    torch, nn = _torch()
    import torch.nn.functional as F

    class DenseLayer(nn.Module):
        def __init__(self, cin, growth=32, bn_size=4):
            super().__init__()
            self.norm1 = nn.BatchNorm2d(cin)
            self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
            self.norm2 = nn.BatchNorm2d(bn_size * growth)
            self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

        def forward(self, features):
            x = self.conv1(torch.relu(self.norm1(torch.cat(features, 1))))
            return self.conv2(torch.relu(self.norm2(x)))

    class DenseBlock(nn.ModuleDict):
        def __init__(self, n, cin):
            super().__init__()
            for i in range(n):
                self[f"denselayer{i + 1}"] = DenseLayer(cin + i * 32)

        def forward(self, x):
            features = [x]
            for layer in self.values():
                features.append(layer(features))
            return torch.cat(features, 1)

    class Transition(nn.Sequential):
        def __init__(self, cin, cout):
            super().__init__()
            self.norm = nn.BatchNorm2d(cin)
            self.relu = nn.ReLU(inplace=True)
            self.conv = nn.Conv2d(cin, cout, 1, bias=False)
            self.pool = nn.AvgPool2d(2, 2)

    class DenseNet121(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [
                ("conv0", nn.Conv2d(3, 64, 7, 2, 3, bias=False)),
                ("norm0", nn.BatchNorm2d(64)),
                ("relu0", nn.ReLU(inplace=True)),
                ("pool0", nn.MaxPool2d(3, 2, 1)),
            ]
            channels = 64
            for i, n in enumerate((6, 12, 24, 16)):
                layers.append((f"denseblock{i + 1}", DenseBlock(n, channels)))
                channels += n * 32
                if i != 3:
                    layers.append((f"transition{i + 1}", Transition(channels, channels // 2)))
                    channels //= 2
            layers.append(("norm5", nn.BatchNorm2d(channels)))
            from collections import OrderedDict

            self.features = nn.Sequential(OrderedDict(layers))
            self.classifier = nn.Linear(channels, 1000)

        def forward(self, x):
            x = torch.relu(self.features(x))
            return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))

    return DenseNet121()


def _vgg11():
    torch, nn = _torch()
    layers, cin = [], 3
    for v in (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"):
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU(inplace=True)]
            cin = v

    class VGG11(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(
                nn.Linear(512 * 49, 4096),
                nn.ReLU(True),
                nn.Dropout(),
                nn.Linear(4096, 4096),
                nn.ReLU(True),
                nn.Dropout(),
                nn.Linear(4096, 1000),
            )

        def forward(self, x):
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    return VGG11()


def _alexnet():
    torch, nn = _torch()

    class AlexNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, 11, 4, 2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2),
                nn.Conv2d(64, 192, 5, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2),
                nn.Conv2d(192, 384, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(384, 256, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(256, 256, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2),
            )
            self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
            self.classifier = nn.Sequential(
                nn.Dropout(0.5),
                nn.Linear(256 * 36, 4096),
                nn.ReLU(inplace=True),
                nn.Dropout(0.5),
                nn.Linear(4096, 4096),
                nn.ReLU(inplace=True),
                nn.Linear(4096, 1000),
            )

        def forward(self, x):
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    return AlexNet()


def _mobilenet_v3_small():
    torch, nn = _torch()

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
        layers = [
            nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout, eps=0.001, momentum=0.01),
        ]
        if act is not None:
            layers.append(act(inplace=True))
        return nn.Sequential(*layers)

    class SqueezeExcitation(nn.Module):
        def __init__(self, channels):
            super().__init__()
            squeeze = divisible(channels // 4)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(channels, squeeze, 1)
            self.fc2 = nn.Conv2d(squeeze, channels, 1)

        def forward(self, x):
            scale = self.fc2(torch.relu(self.fc1(self.avgpool(x))))
            return x * nn.functional.hardsigmoid(scale)

    class InvertedResidual(nn.Module):
        def __init__(self, cin, k, expanded, cout, se, act, stride):
            super().__init__()
            act = nn.Hardswish if act == "HS" else nn.ReLU
            layers = []
            if expanded != cin:
                layers.append(conv_bn(cin, expanded, 1, act=act))
            layers.append(conv_bn(expanded, expanded, k, stride, groups=expanded, act=act))
            if se:
                layers.append(SqueezeExcitation(expanded))
            layers.append(conv_bn(expanded, cout, 1))
            self.block = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            out = self.block(x)
            return out + x if self.residual else out

    config = [
        (16, 3, 16, 16, True, "RE", 2),
        (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1),
        (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1),
        (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2),
        (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    ]

    class MobileNetV3Small(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [conv_bn(3, 16, 3, 2, act=nn.Hardswish)]
            layers += [InvertedResidual(*c) for c in config]
            layers.append(conv_bn(96, 576, 1, act=nn.Hardswish))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(
                nn.Linear(576, 1024),
                nn.Hardswish(inplace=True),
                nn.Dropout(0.2),
                nn.Linear(1024, 1000),
            )

        def forward(self, x):
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    return MobileNetV3Small()


_BUILDERS = {
    "resnet18": _resnet18,
    "googlenet": _googlenet,
    "squeezenet1_0": _squeezenet1_0,
    "densenet121": _densenet121,
    "vgg11": _vgg11,
    "alexnet": _alexnet,
    "mobilenet_v3_small": _mobilenet_v3_small,
}
